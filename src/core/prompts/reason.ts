/**
 * The part of a retrieval's reason a model reads: its first cause. The whole reason (every cause,
 * the held-out coverage of such sets, a cut or a cap) is for the app's logs and UI; in a small
 * model's prompt it is a hundred tokens of counts that name tools beside the point.
 */

/** What sets of a size held on held-out steps, which `selectCandidates` appends to the first cause. */
const CLAIM = / \(sets like this one, of \d+ tools?, hold a right tool in \d+% of such (held-out )?steps\)$/;

/** A reason as a prompt shows it: its first cause, without the held-out claim (undefined stays undefined). */
export function promptReason(reason: string | undefined): string | undefined {
  if (reason === undefined) return undefined;
  return reason.split('; ')[0].replace(CLAIM, '');
}
