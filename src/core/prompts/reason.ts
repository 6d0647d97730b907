/**
 * The part of a retrieval's reason a model reads: its first cause. The whole reason (every cause,
 * the held-out coverage of such sets, a cut or a cap) is for the app's logs and UI; in a small
 * model's prompt it is a hundred tokens of counts that name tools beside the point.
 */
import { HELD_OUT_CLAIM } from '../selection/select.js';

/** A reason as a prompt shows it: its first cause, without the held-out claim (undefined stays undefined). */
export function promptReason(reason: string | undefined): string | undefined {
  if (reason === undefined) return undefined;
  const first = reason.split('; ')[0];
  const claim = first.lastIndexOf(HELD_OUT_CLAIM);
  return claim > 0 && first.endsWith(')') ? first.slice(0, claim) : first;
}
