/**
 * Size and rate limits of the peer service. The 64 KiB payload limit itself is the
 * protocol's (MAX_PAYLOAD_BYTES, packages/protocol/src/limits.ts), the same constant REST intake uses.
 */
import { MAX_PAYLOAD_BYTES } from '@svc-node/protocol/limits';

/**
 * Largest request the server decodes: one full payload plus the framing of one message
 * (auth 110 bytes, txid and contract id 68, field tags and lengths). Anything larger is
 * refused by gRPC itself with RESOURCE_EXHAUSTED before it is decoded.
 */
export const MAX_GRPC_MESSAGE_BYTES = MAX_PAYLOAD_BYTES + 1024;

/**
 * Largest response a client accepts and a server sends: the 4 MiB default of standard
 * gRPC clients. Every answer is paged or bounded well below it (the limits below).
 */
export const MAX_GRPC_RESPONSE_BYTES = 4 * 1024 * 1024;

/**
 * Entries per page of GetContractIds, GetContractSummary and GetContractTxids: 16,384
 * pairs of ~70 encoded bytes are ~1.1 MiB, a quarter of MAX_GRPC_RESPONSE_BYTES, and a
 * million-payload contract is listed in 62 pages.
 */
export const PAGE_MAX = 16_384;

/**
 * Txid ranges per GetContractRanges request. 128 ranges with bounds of up to 32 bytes
 * each are under 9 KiB, well inside MAX_GRPC_MESSAGE_BYTES.
 */
export const RANGES_MAX = 128;

/**
 * Most txids listed for one range: with RANGES_MAX ranges, 16,384 txids of 34 encoded
 * bytes, ~560 KiB per answer. Larger ranges are split by the asker instead.
 */
export const RANGE_LIST_MAX = 128;

/** Payloads per SubmitPayload request, also bounded by MAX_GRPC_MESSAGE_BYTES in total. */
export const MAX_BATCH_PAYLOADS = 64;

/**
 * Tokens of its inbound budget (gossip.inbound_rate_per_s) a peer loses for each payload
 * it sends without a coin paying for its wait (refused coin_missing, bad_coin, coin_unproven or coin_before_anchor): one
 * request's worth, so a SubmitPayload of 64 such payloads costs 65 tokens and a peer
 * that keeps sending them is slowed to its budget / 65 batches a second, while an honest
 * peer, whose payloads all carry their coin, loses nothing.
 */
export const UNPAID_PAYLOAD_COST = 1;

/**
 * Peer keys whose inbound budget is tracked at once (peer-limiter.ts). 64 times the
 * default gossip.max_peers, and two seconds of fresh identities at the default
 * gossip.global_rate_per_s; about 200 bytes each, so under 1 MiB in all.
 */
export const PEER_LIMITER_KEYS = 4096;

/**
 * Summary and txid-list pages (GetContractSummary, GetContractTxids) per peer key per
 * second (also the burst). Each answer is up to PAGE_MAX entries, so they get a budget
 * of their own below the general one: honest sync pages txid lists only for contracts it
 * holds nothing of and never asks for a summary, so 10/s only slows the first sync of a
 * large contract.
 */
export const LIST_RATE_PER_S = 10;

/** List requests of one key that may wait for a token; beyond, RESOURCE_EXHAUSTED. */
export const LIST_QUEUE = 32;

/**
 * GetPayloads batches and GetHeaders pages per peer key per second (also the burst): the
 * fetches of a peer catching up, each answer up to 1 MiB of payloads or GET_HEADERS_MAX
 * headers. A budget of their own, above the list one: at 10 a second a fresh node
 * catching up from one peer took at most 2,560 payloads a second, whatever its
 * verification could do (the endpoint bench: 30,000 payloads in 17 s on 2 cores, the
 * machine a quarter idle; 13 s at 32/s, bound by its CPU). 32 x 256 = 8,192 payloads a
 * second is more than a node with two verification threads checks (~11,000 signatures a
 * second, with the rest of intake). What the answers cost the node all peers ask
 * together stays bounded by LIST_CONCURRENCY.
 */
export const FETCH_RATE_PER_S = 32;

/** Fetches of one key that may wait for a token; beyond, RESOURCE_EXHAUSTED. */
export const FETCH_QUEUE = 32;

/**
 * List requests answered at once across all peers (each is work in the core and the
 * writer thread proportional to its answer): two per core of the machine the node was
 * tuned on. Fresh identities each get a per-key budget, so this is what bounds them.
 */
export const LIST_CONCURRENCY = 4;

/** List requests waiting for one of the LIST_CONCURRENCY slots; beyond, RESOURCE_EXHAUSTED. */
export const LIST_WAITING = 64;

/**
 * Headers per GetHeaders answer: 2,000 x 80 bytes = 160,000 bytes, well inside
 * MAX_GRPC_RESPONSE_BYTES; Bitcoin's own P2P `headers` message carries at most 2,000
 * (Core's MAX_HEADERS_RESULTS), and at it a year of blocks (52,560) is 27 requests. The
 * asker joins pages into longer runs before the endpoint authenticates them (sync/headers.ts).
 */
export const GET_HEADERS_MAX = 2_000;

/** Txids per GetPayloads request: 256 x 34 bytes, ~8.7 KiB, inside MAX_GRPC_MESSAGE_BYTES. */
export const GET_PAYLOADS_MAX = 256;

/**
 * A GetPayloads answer stops before passing this many bytes (it holds one payload at
 * least, at most 64 KiB): a quarter of MAX_GRPC_RESPONSE_BYTES, and ~4,000 typical calls.
 */
export const GET_PAYLOADS_ANSWER_BYTES = 1024 * 1024;
/**
 * Payloads a GetPayloads handler asks the core for first: a round trip per 32 rather
 * than per payload, and at most 31 read past the answer's byte bound if it is reached
 * there. The rest of the request is then asked for as many as the room left holds at
 * the size seen so far (`payloadsThatFit`; read past the bound only as far as the later
 * payloads are larger than those): each core call reads every journal entry its payloads
 * name whole (~1.3 MB for a block of 2,000 calls) and indexes it, so a request of 256
 * small payloads asked 32 at a time read the same entry eight times.
 */
export const PAYLOADS_PER_CORE_CALL = 32;

/**
 * How many more payloads to ask the core for: as many of `rest` as `roomBytes` holds at
 * the average size of those read so far (`readBytes` over `readCount`), at least
 * PAYLOADS_PER_CORE_CALL (or what is left, when fewer).
 */
export function payloadsThatFit(rest: number, roomBytes: number, readBytes: number, readCount: number): number {
  const fit = readCount === 0 || readBytes === 0 ? PAYLOADS_PER_CORE_CALL : Math.floor((roomBytes * readCount) / readBytes);
  return Math.min(rest, Math.max(PAYLOADS_PER_CORE_CALL, fit));
}
/**
 * Fetched payloads handed to the core's intake at once during sync. The writer stores
 * calls that arrive while it is busy in one synced batch of up to 256 (ACCEPT_GROUP_MAX,
 * src/writer/writer.ts): 512 in flight keep one batch filling while the last is written,
 * where `gossip.sync_concurrency` (16) made each fsync carry 16 (and 256 left the writer
 * waiting between batches: the endpoint bench's sync took 11 s for 10,000 payloads with
 * 256 and 64 a message, 9 s with 512 and 128). Far below the pool's queue
 * (workers.queue_limit, 4,096 by default).
 */
export const SYNC_APPLY_CONCURRENCY = 512;
/**
 * Fetched payloads handed to the core in one round trip (peerSubmitMany), four batches
 * keeping SYNC_APPLY_CONCURRENCY in flight, so a batch's slowest payload never holds the
 * others' successors back for long.
 */
export const SYNC_SUBMIT_BATCH = 128;

/**
 * Contract ids taken from one peer's GetContractIds pages in one sync (16 full pages of
 * PAGE_MAX). Sync compares each id with one GetContractRanges request, which an honest
 * peer answers within its default inbound budget (gossip.inbound_rate_per_s, 500/s):
 * 262,144 ids take ~9 minutes of it, near two default sync intervals (300 s), so a
 * larger set could not be compared in a round anyway; held as hex strings, ~30 MB. A peer
 * listing more is answering falsely (sync/contract-sets.ts): the ids past the bound are
 * not taken.
 */
export const REMOTE_CONTRACT_IDS_MAX = 16 * PAGE_MAX;

/**
 * Txids listed from one peer (GetContractTxids pages, contracts this node holds nothing
 * of) in one sync, across its contracts: 16 full pages of PAGE_MAX, ~35 MB as hex strings
 * and fetch entries. A 100,000-payload catch-up is listed in one round; a larger one
 * takes the first 262,144 (each contract's list a prefix: deploy first, chain order), and
 * the next round reconciles the contracts now held and lists the rest. Each contract's
 * list also stops at the count the peer stated for it (its whole-set range answer).
 */
export const SYNC_LISTED_TXIDS_MAX = 16 * PAGE_MAX;
