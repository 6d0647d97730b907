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

/**
 * A reason as a person skims it (the CLI's lines): its first cause, how many more there are, and the
 * held-out claim ("sets like this one, of 4 tools, hold a right tool in 95% of such steps"), if any.
 */
export function skimReason(reason: string): string {
  const at = reason.lastIndexOf(HELD_OUT_CLAIM);
  const claimed = at > 0 && reason.endsWith(')');
  const causes = (claimed ? reason.slice(0, at) : reason).split('; ');
  const more = causes.length > 1 ? ` (+${causes.length - 1} more)` : '';
  return `${causes[0]}${more}${claimed ? ` · ${reason.slice(at + 2, -1)}` : ''}`;
}
