/**
 * JUnit XML of the node runner's checks (`--junit FILE`): one <testsuite> per scenario,
 * one <testcase> per check (its TAP line's name), a <failure> with the expected and got
 * values under a failed one; the bail-out of a run that could not start is an <error>.
 * The vector runner (../run.mjs --junit) writes its cases with it too: a suite per
 * operation, a <skipped> case where the adapter answered unsupported.
 * The shape CI systems read (Jenkins, GitLab, GitHub test reporters): testsuites >
 * testsuite[name, tests, failures, errors, time] > testcase[classname, name, time].
 */
import { writeFileSync } from 'node:fs';

const esc = (s) =>
  String(s)
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');

/**
 * `results`: [{scenario, name, ok, detail, seconds, skipped?}] in run order (`skipped`: the
 * reason a passing case was not run); `bailOut`: the reason, or null.
 */
export function writeJunit(file, results, { bailOut = null, seconds = 0, name = 'conformance:node', classPrefix = 'conformance.node' } = {}) {
  const suites = new Map();
  for (const r of results) {
    if (!suites.has(r.scenario)) suites.set(r.scenario, []);
    suites.get(r.scenario).push(r);
  }
  const failures = results.filter((r) => !r.ok).length;
  const out = ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites name="${esc(name)}" tests="${results.length + (bailOut ? 1 : 0)}" failures="${failures}" errors="${bailOut ? 1 : 0}" time="${seconds.toFixed(3)}">`];
  for (const [scenario, rs] of suites) {
    const time = rs.reduce((t, r) => t + r.seconds, 0);
    out.push(`  <testsuite name="${esc(scenario)}" tests="${rs.length}" failures="${rs.filter((r) => !r.ok).length}" errors="0" skipped="${rs.filter((r) => r.skipped).length}" time="${time.toFixed(3)}">`);
    for (const r of rs) {
      const head = `    <testcase classname="${classPrefix}.${esc(scenario.replace(/[^A-Za-z0-9]+/g, '_'))}" name="${esc(r.name)}" time="${r.seconds.toFixed(3)}"`;
      if (r.skipped) out.push(`${head}>`, `      <skipped message="${esc(r.skipped)}"/>`, '    </testcase>');
      else if (r.ok) out.push(`${head}/>`);
      else {
        const body = Object.entries(r.detail ?? {}).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join('\n');
        out.push(`${head}>`, `      <failure message="${esc((r.detail?.error ?? 'expected and got differ').toString().slice(0, 500))}">${esc(body)}</failure>`, '    </testcase>');
      }
    }
    out.push('  </testsuite>');
  }
  if (bailOut) out.push('  <testsuite name="start" tests="1" failures="0" errors="1" time="0">', `    <testcase classname="conformance.node.start" name="the chain and the nodes start" time="0">`, `      <error message="${esc(bailOut)}"/>`, '    </testcase>', '  </testsuite>');
  out.push('</testsuites>', '');
  writeFileSync(file, out.join('\n'));
}
