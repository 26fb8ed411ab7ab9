import * as db from '../../db/notifications';
import { renderDigestEmail } from '../../domain/notifications';
import { newId } from '../../platform/core/ids';
import type { BuildDigestsResult } from '../../workflows/notification-messages';
import type { ServiceDeps } from '../deps';

// Digests: the entries of a closed window become one queued email per recipient.

/**
 * Collects each recipient's digest entries created before `until` into one email (keyed by user and
 * window, so a repeat builds nothing twice). Recipients without an address have their entries closed.
 */
export async function buildDigests(deps: Pick<ServiceDeps, 'sql'>, orgId: string, until: Date): Promise<BuildDigestsResult> {
  let digests = 0;
  for (const userId of await db.usersWithPendingDigest(deps.sql, orgId, until)) {
    await deps.sql.begin(async (tx) => {
      const [recipient] = await db.membersByIds(tx, orgId, [userId]);
      const emailId = newId();
      const entries = await db.takeDigestEntries(tx, orgId, userId, until, emailId);
      if (entries.length === 0 || !recipient?.email) return;
      entries.sort((a, b) => a.created_at.getTime() - b.created_at.getTime());
      const mail = renderDigestEmail(entries);
      digests += await db.insertEmails(tx, orgId, [
        {
          id: emailId,
          user_id: userId,
          idempotency_key: `digest:${userId}:${until.toISOString()}`,
          kind: 'digest',
          to_address: recipient.email,
          subject: mail.subject,
          text_body: mail.text,
          html_body: mail.html,
        },
      ]);
    });
  }
  return { digests, pending: await db.hasPendingDigest(deps.sql, orgId) };
}
