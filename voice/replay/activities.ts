import { Context } from '@temporalio/activity';
import { answerFromRecording, recordedToolResults } from '../../domain/voice-replay';
import { toolCallKey } from '../../domain/voice-tools';
import { within } from '../../platform/core/within';
import { replaySource, saveReplayResult } from '../../services/conversations/replay-runs';
import { speechKeysOf } from '../../services/integrations/speech-accounts';
import { type ReplayEngineActivities, type ReplayRef, replayToolUpdate, replayWorkflowId } from '../../workflows/replay-messages';
import type { EngineDeps } from '../server';
import { selectProviders } from '../speech/selection';
import { callerTrack } from './caller-audio';
import { replayConversation } from './runner';

// The engine's side of a replay (the workflow's activity on the engines' queue): the recorded
// conversation read through services, its turns run against the chosen version, the result written.

/** How long a tool call run for real may take end to end: the workflow's activity bound (75 s) and a margin. */
const TOOL_ANSWER_MS = 80_000;

export function createReplayEngineActivities(deps: EngineDeps): ReplayEngineActivities {
  return {
    async runReplay(ref: ReplayRef) {
      const context = Context.current();
      const source = await replaySource(deps, ref);
      const { replay, config } = source;
      const logger = deps.logger.child({ replayId: replay.id, conversationId: replay.conversation_id });
      const keys = await speechKeysOf(deps, ref.orgId).catch((error: Error) => ({
        unreadable: `the organization's keys could not be read: ${error.message}`.slice(0, 300),
      }));
      // The version's recognizer and model, as a live call of it would have them (a replay marks no key refused).
      const providers = selectProviders({
        config: deps.config,
        agent: config,
        keys,
        local: deps.speech,
        model: deps.model,
        logger,
        onRefused: () => {},
      });
      const recorded = recordedToolResults(source.turns);
      const used = new Map<string, number>();
      const track = source.recording?.channels === 'dual' ? callerTrack(source.recording.wav) : null;
      const started = performance.now();
      const turns = await replayConversation({
        config,
        instructions: source.instructions,
        firstMessage: source.firstMessage,
        contact: source.contact,
        turns: source.turns,
        track,
        recognizer: providers.speech.recognizer,
        model: providers.model,
        callerVoice: deps.speech.voice,
        signal: context.cancellationSignal,
        onTurn: (turn) => context.heartbeat({ turn: turn.index }),
        async runTool(exchange, name, input) {
          if (!replay.call_tools) return answerFromRecording(recorded, used, name, input);
          // Through the replay's workflow, once each: the update's id is the call's key.
          const key = toolCallKey(`replay-${replay.id}`, exchange, name, input);
          const handle = deps.temporal.workflow.getHandle(replayWorkflowId(replay.id));
          const result = await within(
            TOOL_ANSWER_MS,
            handle.executeUpdate(replayToolUpdate, { args: [{ key, name, arguments: input }], updateId: key }),
          );
          return { ok: result.ok, content: result.content, source: 'called' as const };
        },
      });
      const sum = (pick: (t: (typeof turns)[number]) => number | null) => turns.reduce((n, t) => n + (pick(t) ?? 0), 0);
      const counts = { turns: turns.length, changed: turns.filter((t) => t.changed).length };
      await saveReplayResult(deps, ref, {
        turns,
        turn_count: counts.turns,
        changed_count: counts.changed,
        timings: {
          total_ms: Math.round(performance.now() - started),
          stt_ms: sum((t) => t.timings.stt_ms),
          llm_first_token_ms: sum((t) => t.timings.llm_first_token_ms),
          caller_audio: {
            recording: turns.filter((t) => t.caller?.source === 'recording').length,
            synthesized: turns.filter((t) => t.caller?.source === 'synthesized').length,
            keys: turns.filter((t) => t.caller?.source === 'keys').length,
          },
          recorded_version: source.recordedVersion,
          model: providers.model.name,
          recognizer: providers.speech.recognizer.name,
        },
      });
      return counts;
    },
  };
}
