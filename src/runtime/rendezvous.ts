// Rendezvous (highest random weight) hashing: each key goes to the member whose hash with it is
// highest. When a member joins, only the keys it now wins move (about 1/N of them); when one
// leaves, only its keys move, spread over the rest. Every replica computes the same answer from
// the same members, with no table to share.
import { createHash } from 'node:crypto';

/** The weight of `member` for `key`: the first 48 bits of sha256(member NUL key). */
export function weightOf(member: string, key: string): number {
  const digest = createHash('sha256').update(member).update('\0').update(key).digest();
  return digest.readUIntBE(0, 6);
}

/**
 * The member that should hold `key`: `pinned` when it is one of `members`, else the one of
 * highest weight (a tie, however unlikely, to the smaller name). Undefined without members.
 */
export function ownerOf(key: string, members: readonly string[], pinned?: string): string | undefined {
  if (pinned !== undefined && members.includes(pinned)) return pinned;
  let best: string | undefined;
  let bestWeight = -1;
  for (const member of members) {
    const w = weightOf(member, key);
    if (w > bestWeight || (w === bestWeight && best !== undefined && member < best)) {
      best = member;
      bestWeight = w;
    }
  }
  return best;
}
