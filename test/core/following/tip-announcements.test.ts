/**
 * The tip-announcement policy (src/core/following/tip-announcements.ts) on a fake clock:
 * which peers' announcements a light node pays an endpoint request for, and when its own
 * poll rests because peers lead. test/gossip/tip-announcements.test.ts shows the same
 * policy end to end, counting the endpoint's requests.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PEER_LED_POLL_INTERVALS, TipAnnouncements, type PeerTip } from '../../../src/core/following/tip-announcements.js';

const POLL_S = 60;
const INTERVAL_MS = POLL_S * 1000;

function policy(): { p: TipAnnouncements; clock: { now: number } } {
  const clock = { now: 1_000_000 };
  return { p: new TipAnnouncements(() => clock.now, POLL_S), clock };
}

const tip = (announcer: string, height: number): PeerTip => ({ height, header: new Uint8Array(80), announcer });

test('after an announcement that brought no block, unproven announcers wait a poll interval; a proven one is followed at once', () => {
  const { p, clock } = policy();
  assert.equal(p.offer(tip('honest', 101), 100, false), 'follow');
  assert.equal(p.settle('honest', 'moved'), true, 'a new block: the announcer is proven');
  assert.equal(p.offer(tip('liar', 102), 101, false), 'follow', 'no announcement has failed yet: anyone is asked');
  assert.equal(p.settle('liar', 'asked'), false);
  // Under any number of keys, a liar costs at most one request an interval.
  assert.equal(p.offer(tip('liar', 102), 101, false), 'ignored');
  assert.equal(p.offer(tip('liar-2', 102), 101, false), 'ignored');
  assert.equal(p.offer(tip('honest', 102), 101, false), 'follow', 'the liar does not delay a proven peer');
  clock.now += INTERVAL_MS - 1;
  assert.equal(p.offer(tip('liar-2', 102), 101, false), 'ignored');
  clock.now += 1;
  assert.equal(p.offer(tip('liar-2', 102), 101, false), 'follow', 'a poll interval later, the next unproven one is asked');
  // A follow that failed counts as one that brought nothing, and costs the announcer its standing.
  p.settle('honest', 'failed');
  assert.equal(p.offer(tip('honest', 102), 101, false), 'ignored');
});

test('an announcement not worth a request costs its announcer its standing, but no one waits; one at or below the header tip is ignored', () => {
  const { p } = policy();
  p.settle('a', 'moved');
  p.settle('a', 'unworthy');
  assert.equal(p.offer(tip('b', 101), 100, false), 'follow', 'nothing was asked: no wait');
  p.settle('b', 'asked');
  assert.equal(p.offer(tip('a', 101), 100, false), 'ignored', 'a is no longer proven');
  p.settle('c', 'known');
  assert.equal(p.offer(tip('x', 100), 100, false), 'ignored');
  assert.equal(p.offer(tip('x', 101), null, false), 'ignored', 'no header tip yet');
});

test('while a poll runs one announcement is held: a proven announcer\'s before another\'s, then the highest', () => {
  const { p } = policy();
  p.settle('proven', 'moved');
  assert.equal(p.offer(tip('u1', 105), 100, true), 'held');
  assert.equal(p.offer(tip('u2', 103), 100, true), 'held');
  assert.equal(p.offer(tip('proven', 101), 100, true), 'held');
  assert.equal(p.offer(tip('u3', 110), 100, true), 'held');
  assert.deepEqual(p.takeHeld(), tip('proven', 101));
  assert.equal(p.takeHeld(), null, 'taken once');
  p.offer(tip('u1', 105), 100, true);
  p.offer(tip('u2', 107), 100, true);
  p.offer(tip('u3', 106), 100, true);
  assert.equal(p.takeHeld()?.announcer, 'u2');
});

test('the own poll rests while peers lead, for PEER_LED_POLL_INTERVALS; a block it finds first ends the lead', () => {
  const { p, clock } = policy();
  assert.equal(p.ownPollDue(INTERVAL_MS), true);
  p.settle('peer', 'moved');
  assert.equal(p.peersLead, true);
  clock.now += PEER_LED_POLL_INTERVALS * INTERVAL_MS - 1;
  assert.equal(p.ownPollDue(INTERVAL_MS), false);
  clock.now += 1;
  assert.equal(p.ownPollDue(INTERVAL_MS), true, 'peers silent that long: the node polls itself');
  p.noteOwnPoll(false);
  assert.equal(p.peersLead, true, 'a poll that found nothing leaves the lead');
  assert.equal(p.ownPollDue(INTERVAL_MS), false, 'and rests again from that poll');
  clock.now += PEER_LED_POLL_INTERVALS * INTERVAL_MS;
  p.noteOwnPoll(true);
  assert.equal(p.peersLead, false);
  assert.equal(p.ownPollDue(INTERVAL_MS), true);
});
