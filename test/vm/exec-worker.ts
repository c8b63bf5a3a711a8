/** Worker entry for the determinism test: a fresh thread; programs either rebuilt
 *  from source or received by structured clone (Program is plain data). */
import { parentPort, workerData } from 'node:worker_threads';
import type { Program } from '@svc-node/protocol/vm/types';
import { MemHost } from '../helpers/vm.js';
import { runScenario } from './exec-worker-lib.js';

const { inner, outer, programs } = workerData as { inner: string; outer: string; programs?: Program[] };
parentPort!.postMessage(runScenario(inner, outer, new MemHost(), programs));
