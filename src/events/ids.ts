import { createCipheriv, createDecipheriv, createHmac } from "node:crypto";
import { exactParse } from "../exact-json.js";
import { idOf, positionOf, type EventRow, type Position } from "./log.js";
import type { ClientEvent } from "./types.js";

/** evt_ + one AES block, base64url. */
const VISIBLE_ID = /^evt_([A-Za-z0-9_-]{22})$/;
/** Position parts are PostgreSQL bigints; 7 bytes each is room for 2^56, far beyond any xid or sequence. */
const PART_BYTES = 7;
const MAX_PART = 2n ** BigInt(8 * PART_BYTES);
/** Clients whose keys are kept derived (a cache, rebuilt as needed). */
const KEY_CACHE_SIZE = 10_000;

/**
 * The event ids clients see. The log's own id is its (xid, seq) position, and both numbers are shared
 * by every tenant: their gaps would show other tenants' volume. So each id a client sees is its
 * position encrypted under a key of the client's own (AES-128 of one block: xid and seq in 7 bytes
 * each, then 2 zero bytes that tell a real id from a made-up one). Ids are opaque and stable (the
 * same event always has the same id: a webhook's `webhook-id` is one), decrypt back to the exact
 * position (so `after` resumes exactly), and mean nothing across clients. The log's own ids
 * (`evt_` + 32 hex digits) are never accepted from a client: their shared xids would let a caller
 * binary-search the log and measure every other tenant's write volume.
 */
export class EventIds {
  private readonly keys = new Map<string, Buffer>();

  constructor(private readonly secret: Buffer) {}

  /** The id the client sees of the log's event `id`. */
  visible(clientId: string, id: string): string {
    const position = positionOf(id);
    if (!position || position.xid >= MAX_PART || position.seq >= MAX_PART) throw new Error("not an event id of the log");
    const block = Buffer.alloc(16);
    block.writeBigUInt64BE(position.xid << 8n, 0);
    block.writeBigUInt64BE(position.seq << 8n, PART_BYTES);
    block.writeUInt16BE(0, 2 * PART_BYTES);
    const cipher = createCipheriv("aes-128-ecb", this.keyOf(clientId), null).setAutoPadding(false);
    return `evt_${Buffer.concat([cipher.update(block), cipher.final()]).toString("base64url")}`;
  }

  /** The log position of an id the client was given; undefined for anything else. */
  position(clientId: string, id: string): Position | undefined {
    const match = VISIBLE_ID.exec(id);
    if (!match) return undefined;
    const sealed = Buffer.from(match[1], "base64url");
    if (sealed.length !== 16) return undefined;
    const decipher = createDecipheriv("aes-128-ecb", this.keyOf(clientId), null).setAutoPadding(false);
    const block = Buffer.concat([decipher.update(sealed), decipher.final()]);
    if (block.readUInt16BE(2 * PART_BYTES) !== 0) return undefined;
    return { xid: block.readBigUInt64BE(0) >> 8n, seq: block.readBigUInt64BE(PART_BYTES) >> 8n };
  }

  /** The log's id of an id the client was given; undefined when it is none. */
  logId(clientId: string, id: string): string | undefined {
    const position = this.position(clientId, id);
    return position && idOf(position);
  }

  /** An event as the client sees it; its numbers are ExactNumbers, written back with every digit the log holds. */
  clientEvent(clientId: string, row: EventRow): ClientEvent {
    const data = exactParse(row.data) as ClientEvent["data"];
    return { id: this.visible(clientId, row.id), type: row.type, createdAt: row.createdAt.toISOString(), livemode: data.object.livemode === true, data };
  }

  private keyOf(clientId: string): Buffer {
    let key = this.keys.get(clientId);
    if (!key) {
      if (this.keys.size >= KEY_CACHE_SIZE) this.keys.clear();
      key = createHmac("sha256", this.secret).update(`event-ids\0${clientId}`).digest().subarray(0, 16);
      this.keys.set(clientId, key);
    }
    return key;
  }
}
