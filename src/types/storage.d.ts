// Minimal typings for the two storage packages (they ship none); only what src/writer/db.ts uses.
declare module 'levelup' {
  type Cb<T = void> = (err: (Error & { notFound?: boolean }) | null | undefined, value?: T) => void;
  interface ReadStreamOptions { gte?: Buffer; lt?: Buffer; limit?: number; reverse?: boolean }
  interface LevelUp {
    open(cb: Cb): void;
    close(cb: Cb): void;
    get(key: Buffer, cb: Cb<Buffer>): void;
    getMany(keys: Buffer[], opts: unknown, cb: Cb<(Buffer | undefined)[]>): void;
    batch(ops: unknown[], opts: unknown, cb: Cb): void;
    createReadStream(opts: ReadStreamOptions): NodeJS.EventEmitter;
  }
  function levelup(store: unknown, cb?: Cb): LevelUp;
  export default levelup;
}
declare module 'rocksdb' {
  type Callback = (err?: Error | null) => void;
  /** abstract-leveldown's chained batch: puts and deletes go to the native batch at once. */
  interface ChainedBatch {
    put(key: Buffer, value: Buffer): ChainedBatch;
    del(key: Buffer): ChainedBatch;
    write(options: { sync?: boolean }, callback: Callback): void;
  }
  interface RocksDB {
    batch(): ChainedBatch;
  }
  function rocksdb(location: string): RocksDB;
  export default rocksdb;
}
