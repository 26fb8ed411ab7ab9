import type { Sql } from '../../db/client';
import { abandonSource, appendFrames, framesOfSource } from '../../db/ui-streams';
import { openTextIds, type UiFrame } from '../../domain/ui-message-stream';

/**
 * The frames around one model step of a turn, for any stream (the AI chat, the Analytics Assistant).
 * A retry after a cut-off attempt (a killed worker) closes the text that attempt left open and marks its
 * frames abandoned, so the stored message leaves them out; the step's opening (`start` when given, then
 * `start-step`) is written once, whatever the attempt. Answers whether a cut-off attempt was closed.
 */
export async function beginModelStep(
  sql: Sql,
  orgId: string,
  streamId: string,
  sources: { model: string; opening: string },
  start: UiFrame | null,
): Promise<{ cutOff: boolean }> {
  const cutOff = await framesOfSource(sql, orgId, streamId, sources.model);
  if (cutOff.length > 0) {
    await sql.begin(async (tx) => {
      await abandonSource(tx, orgId, streamId, sources.model);
      const closing = openTextIds(cutOff).map((id): UiFrame => ({ type: 'text-end', id }));
      await appendFrames(tx, orgId, streamId, `${sources.model}:cut-off`, closing, { abandoned: true });
    });
  }
  if ((await framesOfSource(sql, orgId, streamId, sources.opening)).length === 0) {
    await appendFrames(sql, orgId, streamId, sources.opening, [...(start ? [start] : []), { type: 'start-step' }]);
  }
  return { cutOff: cutOff.length > 0 };
}
