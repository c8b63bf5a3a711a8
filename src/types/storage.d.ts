// Minimal typings for the storage binding (it ships none); only what src/writer/db.ts and
// the store migration use. The API is abstract-level 1.x with buffer keys and values.
declare module '@nxtedition/rocksdb' {
  export interface ChainedBatch {
    put(key: Buffer, value: Buffer): ChainedBatch;
    del(key: Buffer): ChainedBatch;
    write(options: { sync?: boolean }): Promise<void>;
  }
  export interface Iterator {
    all(): Promise<[Buffer, Buffer][]>;
    [Symbol.asyncIterator](): AsyncIterator<[Buffer, Buffer]>;
  }
  export class RocksLevel {
    /** A location opens a database; a handle (`handle` of an open one, from any thread) shares it. */
    constructor(
      location: string | bigint,
      options: { keyEncoding: 'buffer'; valueEncoding: 'buffer'; compaction?: 'level' | 'universal'; memtableMemoryBudget?: number; walCompression?: boolean },
    );
    open(): Promise<void>;
    /** The open database's native handle, for another thread's instance. */
    readonly handle: bigint;
    close(): Promise<void>;
    getMany(keys: Buffer[]): Promise<(Buffer | undefined)[]>;
    batch(): ChainedBatch;
    iterator(options: { gte?: Buffer; lt?: Buffer; limit?: number; reverse?: boolean }): Iterator;
  }
}
