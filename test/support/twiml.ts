import { DomUtils, parseDocument } from 'htmlparser2';

// TwiML read as Twilio reads it: the verbs under <Response>, each with its attributes, text and nested
// nouns (<Dial><Number url="…">+1…</Number></Dial>), so a test asserts what a call was told to do.

export interface TwimlVerb {
  name: string;
  attributes: Record<string, string>;
  /** The text directly inside it (a <Say>'s words, a <Dial>'s bare number). */
  text: string;
  children: TwimlVerb[];
}

export function parseTwiml(twiml: string): TwimlVerb[] {
  if (!twiml) return [];
  const document = parseDocument(twiml, { xmlMode: true });
  const response = DomUtils.findOne((e) => e.name === 'Response', document.children, true);
  return response ? verbsOf(response) : [];
}

function verbsOf(parent: ReturnType<typeof DomUtils.getChildren>[number]): TwimlVerb[] {
  return DomUtils.getChildren(parent)
    .filter(DomUtils.isTag)
    .map((e) => ({
      name: e.name,
      attributes: { ...e.attribs },
      text: DomUtils.getChildren(e)
        .filter(DomUtils.isText)
        .map((t) => t.data)
        .join('')
        .trim(),
      children: verbsOf(e),
    }));
}
