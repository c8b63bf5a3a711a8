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
  function levelup(store: unknown): LevelUp;
  export default levelup;
}
declare module 'rocksdb' {
  function rocksdb(location: string): unknown;
  export default rocksdb;
}
