import type { ChatTask } from './task-set';

/**
 * Chat tasks of the kinds a confident wrong answer came from, over the seed of `seedGoldenCrm`: one record's
 * detail, text by its end, negation, "without", a value the organization lacks, fields of a joined record,
 * and proposals that must carry every field the message names and none it does not (a new person whose
 * first name another contact has, a title or phone said in the same sentence, a department). Tuned on;
 * `bench/fixtures/assistants-heldout.json` is kept apart.
 */
export const CHAT_TASK_KINDS: ChatTask[] = [
  {
    id: 'q01',
    difficulty: 'easy',
    kind: 'read',
    phrasings: ['What industry is Wonka in?', "What's Wonka's industry?", 'Which sector is Wonka in?'],
    expectText: ['Healthcare'],
  },
  {
    id: 'q02',
    difficulty: 'easy',
    kind: 'read',
    phrasings: ['Who owns Stark?', 'Who is the owner of the Stark account?', "Stark's account owner?"],
    expectText: ['alice'],
  },
  {
    id: 'q03',
    difficulty: 'medium',
    kind: 'read',
    phrasings: ['Which accounts have a .fr domain?', 'Show me the accounts on .fr', 'List the companies whose domain ends with .fr'],
    expectText: ['Société Générale'],
    rejectText: ['Acme', 'Globex', 'Initrode Systems'],
  },
  {
    id: 'q04',
    difficulty: 'easy',
    kind: 'read',
    phrasings: ["What's the email of Anna Acme?", 'Email address of Anna Acme', 'How do I email Anna Acme?'],
    expectText: ['anna.acme@acme.com'],
  },
  {
    id: 'q05',
    difficulty: 'medium',
    kind: 'read',
    phrasings: ['Which accounts have no deals?', 'Accounts without any deals', 'Show me the companies with no opportunities at all'],
    expectText: ['Tyrell', 'Vandelay'],
    rejectText: ['Acme', 'Globex'],
  },
  {
    id: 'q06',
    difficulty: 'medium',
    kind: 'read',
    phrasings: ['Show me the deals we have with Pied Piper', 'Any deals with Pied Piper?', 'List the Pied Piper opportunities'],
    expectText: ['Pied Piper'],
    rejectText: ['Acme deal', 'Globex deal'],
  },
  {
    id: 'q07',
    difficulty: 'medium',
    kind: 'read',
    phrasings: ['Which contacts have a gmail address?', 'Show me the contacts with gmail emails', 'List the people using gmail.com'],
    expectText: ['Ben Globex', 'Eli Solo'],
    rejectText: ['Anna Acme'],
  },
  {
    id: 'q08',
    difficulty: 'hard',
    kind: 'read',
    phrasings: [
      'Which industry has the most deals?',
      'The industry with the most opportunities, and how many',
      'What industry do most of our deals come from?',
    ],
    expectText: ['Retail'],
  },
  // Proposals carry every field named, none other.
  {
    id: 'p01',
    difficulty: 'medium',
    kind: 'write',
    phrasings: [
      'Add Anna Smith as CFO at Hooli, email anna.smith@hooli.com',
      'Create a contact at Hooli: Anna Smith, CFO, anna.smith@hooli.com',
      'Hooli has a new CFO, Anna Smith (anna.smith@hooli.com); add her as a contact.',
    ],
    expectProposal: {
      tool: 'create_contact',
      target: { entity: 'account', name: 'Hooli' },
      input: { first_name: 'Anna', last_name: 'Smith', title: 'CFO', email: 'anna.smith@hooli.com' },
    },
  },
  {
    id: 'p02',
    difficulty: 'medium',
    kind: 'write',
    phrasings: [
      'Add a contact at Stark: Tony Rhodes, Head of Security',
      'Create Tony Rhodes at Stark as Head of Security',
      'New contact at Stark named Tony Rhodes, title Head of Security',
    ],
    expectProposal: {
      tool: 'create_contact',
      target: { entity: 'account', name: 'Stark' },
      input: { first_name: 'Tony', last_name: 'Rhodes', title: 'Head of Security' },
    },
  },
  {
    id: 'p03',
    difficulty: 'hard',
    kind: 'write',
    phrasings: [
      'Add Pepper Potts to Wayne as COO, phone +1 555 0199',
      'Create a contact at Wayne: Pepper Potts, COO, phone +1 555 0199',
      'Wayne has a new COO, Pepper Potts, phone +1 555 0199; add her.',
    ],
    expectProposal: {
      tool: 'create_contact',
      target: { entity: 'account', name: 'Wayne' },
      input: { first_name: 'Pepper', last_name: 'Potts', title: 'COO', phone: '+1 555 0199' },
    },
  },
  {
    id: 'p04',
    difficulty: 'medium',
    kind: 'write',
    phrasings: ['Create a contact Lucius Fox at Wayne', 'Add Lucius Fox as a contact at Wayne', 'New contact at Wayne: Lucius Fox'],
    expectProposal: {
      tool: 'create_contact',
      target: { entity: 'account', name: 'Wayne' },
      input: { first_name: 'Lucius', last_name: 'Fox' },
    },
  },
  {
    id: 'p05',
    difficulty: 'hard',
    kind: 'write',
    phrasings: [
      'Ben Acme moved to the Finance department',
      "Set Ben Acme's department to Finance",
      'Ben Acme is now in the Finance department',
    ],
    expectProposal: {
      tool: 'update_contact',
      target: { entity: 'contact', name: 'Ben Acme' },
      input: { changes: { department: 'Finance' } },
    },
  },
  {
    id: 'p06',
    difficulty: 'medium',
    kind: 'write',
    phrasings: [
      "Change Chloe Hooli's phone to +1 555 0142",
      "Chloe Hooli's phone number is now +1 555 0142",
      'Update the phone of Chloe Hooli to +1 555 0142',
    ],
    expectProposal: {
      tool: 'update_contact',
      target: { entity: 'contact', name: 'Chloe Hooli' },
      input: { changes: { phone: '+1 555 0142' } },
    },
  },
  {
    id: 'p07',
    difficulty: 'hard',
    kind: 'write',
    phrasings: [
      "Anna Globex's title is now VP Sales and her email is anna@globex.io",
      'Update Anna Globex: title VP Sales, email anna@globex.io',
      'Set the title of Anna Globex to VP Sales and her email to anna@globex.io',
    ],
    expectProposal: {
      tool: 'update_contact',
      target: { entity: 'contact', name: 'Anna Globex' },
      input: { changes: { title: 'VP Sales', email: 'anna@globex.io' } },
    },
  },
  {
    id: 'p08',
    difficulty: 'medium',
    kind: 'write',
    phrasings: [
      'Set the industry of Wonka to retail and its employee count to 450',
      'Wonka is in retail now and has 450 employees',
      'Update Wonka: industry retail, 450 employees',
    ],
    expectProposal: {
      tool: 'update_account',
      target: { entity: 'account', name: 'Wonka' },
      input: { changes: { industry: 'retail', employee_count: 450 } },
    },
  },
  {
    id: 'c01',
    difficulty: 'medium',
    kind: 'clarify',
    phrasings: ["Update Anna's title to CEO", "Change Anna's email to anna@example.com", 'Tell me about Anna'],
    expectText: ['Anna Acme', 'Anna Globex'],
  },
];
