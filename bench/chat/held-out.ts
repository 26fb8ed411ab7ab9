import type { ChatTask } from './task-set';

/**
 * A held-out set for the AI chat: new requests over the seeded CRM of `seedGoldenCrm`, each asked three
 * ways, judged by the rules of task-set.ts (reads name the records exactly as stored or give the numbers
 * the CRM holds; writes propose exactly one change of the named tool on the named record, carrying only
 * the fields the user named; clarifications name the candidates and propose nothing; refusals call no tool).
 */
export const HELD_OUT_TASKS: ChatTask[] = [
  // read
  {
    id: 'xr01',
    difficulty: 'easy',
    kind: 'read',
    phrasings: ['Which of our accounts are retailers?', 'Show me the retail companies', 'List every account in the Retail industry.'],
    expectText: ['Globex', 'Stark', 'Soylent', 'Initrode Labs'],
    rejectText: ['Acme', 'Wayne', 'Initrode Systems'],
  },
  {
    id: 'xr02',
    difficulty: 'medium',
    kind: 'read',
    phrasings: [
      'Who are our VP Sales contacts?',
      'List the contacts whose title is VP Sales',
      'Show me every person with the job title "VP Sales".',
    ],
    expectText: [
      'Anna Globex',
      'Chloe Initech',
      'Ben Hooli',
      'Anna Wayne',
      'Chloe Wonka',
      'Ben Soylent',
      'Chloe Société Générale',
      'Ben Initrode Systems',
    ],
    rejectText: ['Ben Globex', 'Chloe Umbrella', 'Anna Acme'],
  },
  {
    id: 'xr03',
    difficulty: 'medium',
    kind: 'read',
    phrasings: ['Which deals are owned by carol?', "Show me carol's deals", 'List the deals whose owner is carol.'],
    expectText: [
      'Acme deal 2',
      'Cyberdyne deal 1',
      'Globex deal 2',
      'Initech deal 1',
      'Initrode Labs deal 2',
      'Initrode Systems deal 1',
      'Société Générale deal 2',
      'Soylent deal 1',
      'Umbrella deal 1',
      'Wayne deal 2',
      'Wonka deal 2',
    ],
    rejectText: ['Acme deal 1', 'Wonka deal 1', 'Stark deal 1'],
  },
  {
    id: 'xr04',
    difficulty: 'easy',
    kind: 'read',
    phrasings: [
      'Which contacts did we meet at an event?',
      'Show me the contacts whose source is event',
      'List the people who came from events.',
    ],
    expectText: ['Dana Free', 'Eli Solo'],
    rejectText: ['Anna Acme', 'Ben Acme'],
  },
  {
    id: 'xr05',
    difficulty: 'medium',
    kind: 'read',
    phrasings: ['Which deals carry the partner tag?', 'Show me the partner deals', 'List all deals tagged partner.'],
    expectText: [
      'Globex deal 2',
      'Initech deal 1',
      'Initrode Labs deal 2',
      'Initrode Systems deal 1',
      'Soylent deal 2',
      'Stark deal 2',
      'Wayne deal 1',
    ],
    rejectText: ['Wayne deal 2', 'Stark deal 1', 'Acme deal 1'],
  },
  {
    id: 'xr06',
    difficulty: 'medium',
    kind: 'read',
    phrasings: ['Which deals have we won?', 'Show me the closed-won deals', 'List every deal in the closed won stage.'],
    expectText: ['Acme deal 2', 'Société Générale deal 2', 'Soylent deal 2', 'Umbrella deal 2', 'Wayne deal 2'],
    rejectText: ['Globex deal 1', 'Hooli deal 1', 'Wonka deal 1'],
  },
  {
    id: 'xr07',
    difficulty: 'hard',
    kind: 'read',
    phrasings: [
      'How much have we won in total, per currency?',
      'What is the total value of our won deals, by currency?',
      'Sum the value of all closed-won deals, separately for each currency.',
    ],
    expectText: ['USD', '63000', 'EUR', '34500'],
  },
  {
    id: 'xr08',
    difficulty: 'hard',
    kind: 'read',
    phrasings: [
      'What is the average health score of our Software accounts, to two decimals?',
      'On average, how healthy are the software companies? Two decimals please.',
      'Mean health score of accounts in the Software industry, rounded to 2 decimals?',
    ],
    expectText: ['51.67'],
  },
  // write
  {
    id: 'xw01',
    difficulty: 'medium',
    kind: 'write',
    phrasings: [
      'Anna Acme got married, her last name is Smith now',
      'Change the last name of Anna Acme to Smith.',
      "Update Anna Acme's surname to Smith",
    ],
    expectProposal: {
      tool: 'update_contact',
      target: { entity: 'contact', name: 'Anna Acme' },
      input: { changes: { last_name: 'Smith' } },
    },
  },
  {
    id: 'xw02',
    difficulty: 'easy',
    kind: 'write',
    phrasings: [
      "Hooli's domain is hooli.io now",
      'Change the domain of the account Hooli to hooli.io.',
      "Set Hooli's web domain to hooli.io",
    ],
    expectProposal: { tool: 'update_account', target: { entity: 'account', name: 'Hooli' }, input: { changes: { domain: 'hooli.io' } } },
  },
  {
    id: 'xw03',
    difficulty: 'easy',
    kind: 'write',
    phrasings: [
      'Move Globex deal 2 to proposal',
      'We sent a proposal for Globex deal 2, update its stage.',
      'Globex deal 2 is at the proposal stage now.',
    ],
    expectProposal: { tool: 'move_deal_stage', target: { entity: 'deal', name: 'Globex deal 2' }, input: { stage: 'proposal' } },
  },
  {
    id: 'xw04',
    difficulty: 'medium',
    kind: 'write',
    phrasings: ['Give Wonka deal 2 to bob', 'Make bob the owner of Wonka deal 2.', 'Reassign the deal Wonka deal 2 to bob'],
    expectProposal: { tool: 'update_deal', target: { entity: 'deal', name: 'Wonka deal 2' }, input: { changes: { owner_id: 'bob' } } },
  },
  {
    id: 'xw05',
    difficulty: 'medium',
    kind: 'write',
    phrasings: [
      'Log a meeting with Cyberdyne: "Quarterly business review"',
      'We just had a meeting with Cyberdyne, record it with the subject "Quarterly business review".',
      'Add a meeting to the Cyberdyne account: Quarterly business review',
    ],
    expectProposal: {
      tool: 'create_activity',
      target: { entity: 'account', name: 'Cyberdyne' },
      input: { type: 'meeting', subject: 'Quarterly business review' },
    },
  },
  {
    id: 'xw06',
    difficulty: 'medium',
    kind: 'write',
    phrasings: [
      "Chloe Wayne's phone number is +1 555 0100",
      'Set the phone of the contact Chloe Wayne to +1 555 0100.',
      'Update Chloe Wayne: phone +1 555 0100',
    ],
    expectProposal: {
      tool: 'update_contact',
      target: { entity: 'contact', name: 'Chloe Wayne' },
      input: { changes: { phone: '+1 555 0100' } },
    },
  },
  {
    id: 'xw07',
    difficulty: 'hard',
    kind: 'write',
    phrasings: [
      'Soylent deal 1 is priced in EUR now',
      'Change the currency of Soylent deal 1 to euros.',
      'Switch Soylent deal 1 over to EUR',
    ],
    expectProposal: { tool: 'update_deal', target: { entity: 'deal', name: 'Soylent deal 1' }, input: { changes: { currency: 'EUR' } } },
  },
  {
    id: 'xw08',
    difficulty: 'hard',
    kind: 'write',
    phrasings: [
      'Add Tom Baker (tom.baker@tyrell.com) as a contact at Tyrell',
      'Create a contact named Tom Baker at the account Tyrell, email tom.baker@tyrell.com.',
      'Tyrell has a new person: Tom Baker, tom.baker@tyrell.com. Please add him.',
    ],
    expectProposal: {
      tool: 'create_contact',
      target: { entity: 'account', name: 'Tyrell' },
      input: { first_name: 'Tom', last_name: 'Baker', email: 'tom.baker@tyrell.com' },
    },
  },
  // clarify: a name that fits two records
  {
    id: 'xa01',
    difficulty: 'medium',
    kind: 'clarify',
    phrasings: ['Mark the Wonka deal as won', 'We won the deal with Wonka!', "Move Wonka's deal to closed won."],
    expectText: ['Wonka deal 1', 'Wonka deal 2'],
  },
  {
    id: 'xa02',
    difficulty: 'hard',
    kind: 'clarify',
    phrasings: [
      "Change Ben Initrode's title to CTO",
      'Ben at Initrode is our CTO contact now, update his title.',
      'Set the job title of Ben Initrode to CTO.',
    ],
    expectText: ['Ben Initrode Labs', 'Ben Initrode Systems'],
  },
  // refuse: no such action, outside the CRM
  {
    id: 'xx01',
    difficulty: 'medium',
    kind: 'refuse',
    phrasings: [
      'Delete the contact Dana Free',
      'Remove Dana Free from the CRM for good.',
      'Erase Dana Free, we never want to see her again',
    ],
  },
  {
    id: 'xx02',
    difficulty: 'easy',
    kind: 'refuse',
    phrasings: [
      'Book me a flight to Berlin next Monday',
      'Find me a plane ticket to Berlin for Monday.',
      'Can you reserve a flight to Berlin on Monday?',
    ],
  },
];
