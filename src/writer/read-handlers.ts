/** Writer handlers of WriterReadApi. */
import type { Handlers } from '../ipc/rpc.js';
import type { WriterReadApi } from '../messages.js';
import type { Writer } from './writer.js';

export function writerReadHandlers(_writer: Writer): Handlers<WriterReadApi> {
  return {};
}
