import { describe, expect, it } from 'vitest';
import { vapiToolCallsOf } from '../../platform/adapters/dialers/vapi-tool-calls';

// The shapes of Vapi's `tool-calls` message: its schema's (function.arguments as an object or JSON text),
// the flat one its examples show (name with arguments or parameters), and calls listed only with their tool.

describe('vapiToolCallsOf', () => {
  it('reads the schema’s form, arguments as an object or as JSON text', () => {
    expect(
      vapiToolCallsOf({
        toolCallList: [
          { id: 'a', type: 'function', function: { name: 'order_status', arguments: { order: 'A-17' } } },
          { id: 'b', type: 'function', function: { name: 'order_status', arguments: '{"order":"B-2"}' } },
          { id: 'c', type: 'function', function: { name: 'order_status', arguments: 'not json' } },
        ],
      }),
    ).toEqual([
      { id: 'a', name: 'order_status', arguments: { order: 'A-17' } },
      { id: 'b', name: 'order_status', arguments: { order: 'B-2' } },
      { id: 'c', name: 'order_status', arguments: {} },
    ]);
  });

  it('reads the flat form and calls listed only with their tool, each id once', () => {
    expect(
      vapiToolCallsOf({
        toolCallList: [
          { id: 'a', name: 'get_weather', arguments: { location: 'San Francisco' } },
          { id: 'b', name: 'send_email', parameters: { to: 'x@example.test' } },
        ],
        toolWithToolCallList: [
          {
            type: 'function',
            toolCall: { id: 'a', type: 'function', function: { name: 'get_weather', parameters: { location: 'Elsewhere' } } },
          },
          { type: 'function', toolCall: { id: 'c', type: 'function', function: { name: 'lookup', parameters: { q: 'z' } } } },
        ],
      }),
    ).toEqual([
      { id: 'a', name: 'get_weather', arguments: { location: 'San Francisco' } },
      { id: 'b', name: 'send_email', arguments: { to: 'x@example.test' } },
      { id: 'c', name: 'lookup', arguments: { q: 'z' } },
    ]);
  });

  it('skips entries without an id or a name', () => {
    expect(vapiToolCallsOf({ toolCallList: [{ function: { name: 'x' } }, { id: 'y' }, null], toolWithToolCallList: 'nope' })).toEqual([]);
  });
});
