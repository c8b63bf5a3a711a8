/** Writer handlers of WriterPeerApi. */
import type { Handlers } from '../ipc/rpc.js';
import type { WriterPeerApi } from '../messages.js';
import type { Writer } from './writer.js';

export function writerPeerHandlers(_writer: Writer): Handlers<WriterPeerApi> {
  return {};
}
