/**
 * The AI chat's task set: requests in plain words over the seeded CRM of `seedGoldenCrm`
 * (bench/analytics/golden-set.ts), each asked three ways, with what a right answer holds. Reads must
 * name the records (exactly as stored) or numbers the CRM gives; writes must propose exactly one change
 * of the named tool on the named record, carrying only the fields the user named; clarifications ask
 * which record was meant and propose nothing; refusals say what the assistant can do and propose nothing.
 *
 * The names of the seed that matter here: contacts are '<Anna|Ben|Chloe> <Account>' (first and last
 * name), plus 'Dana Free' and 'Eli Solo' at no account; deals are '<Account> deal <1|2>' (Tyrell and
 * Vandelay have none); 'Initrode Labs' and 'Initrode Systems' share a word, as do both deals of an account.
 */

export type ChatTaskKind = 'read' | 'write' | 'clarify' | 'refuse';
export type ChatProposalTool =
  | 'update_account'
  | 'update_contact'
  | 'update_deal'
  | 'move_deal_stage'
  | 'create_activity'
  | 'create_contact';

export interface ChatTask {
  id: string;
  difficulty: 'easy' | 'medium' | 'hard';
  kind: ChatTaskKind;
  phrasings: [string, string, string];
  /** read: every string must appear in the answer text (names exactly as stored; numbers are compared as numbers, thousands separators ignored), and no change is proposed. */
  expectText?: string[];
  /** read: strings that must NOT appear (e.g. a record the filter excludes). */
  rejectText?: string[];
  /** write: exactly one proposal, of this tool, on the named record, whose input has exactly these fields (besides the record id field). */
  expectProposal?: {
    tool: ChatProposalTool;
    target: { entity: 'account' | 'contact' | 'deal'; name: string };
    input: Record<string, unknown>;
  };
}

export const CHAT_TASKS: ChatTask[] = [
  // read: accounts
  {
    id: 'r01',
    difficulty: 'easy',
    kind: 'read',
    phrasings: ['Which accounts are in healthcare?', 'List our healthcare accounts', 'Show me the accounts whose industry is Healthcare.'],
    expectText: ['Umbrella', 'Vandelay', 'Wonka'],
    rejectText: ['Acme', 'Stark', 'Wayne'],
  },
  {
    id: 'r02',
    difficulty: 'easy',
    kind: 'read',
    phrasings: ['Which accounts are tagged vip?', 'Show me our VIP accounts', 'List every account with the vip tag.'],
    expectText: ['Acme', 'Cyberdyne', 'Hooli', 'Société Générale'],
    rejectText: ['Globex', 'Soylent', 'Initrode Systems'],
  },
  {
    id: 'r03',
    difficulty: 'medium',
    kind: 'read',
    phrasings: [
      'Which accounts have more than 600 employees?',
      'Show me the companies with over 600 staff',
      'List accounts whose employee count is above 600.',
    ],
    expectText: ['Initrode Labs', 'Initrode Systems', 'Société Générale'],
    rejectText: ['Vandelay', 'Tyrell'],
  },
  {
    id: 'r04',
    difficulty: 'medium',
    kind: 'read',
    phrasings: ['Which accounts does alice own?', "Show me alice's accounts", 'List the accounts whose owner is alice.'],
    expectText: ['Cyberdyne', 'Initech', 'Initrode Systems', 'Stark', 'Vandelay'],
    rejectText: ['Initrode Labs', 'Acme', 'Wonka'],
  },
  {
    id: 'r05',
    difficulty: 'easy',
    kind: 'read',
    phrasings: ['Which account has the domain initrode.io?', 'Whose website is on initrode.io?', 'Find the account at initrode.io'],
    expectText: ['Initrode Systems'],
    rejectText: ['Initrode Labs'],
  },
  // read: contacts
  {
    id: 'r06',
    difficulty: 'easy',
    kind: 'read',
    phrasings: ['Who is the CEO at Umbrella?', "Who's Umbrella's CEO?", 'Find the contact with the title CEO at the account Umbrella.'],
    expectText: ['Chloe Umbrella'],
    rejectText: ['Anna Umbrella', 'Ben Umbrella'],
  },
  {
    id: 'r07',
    difficulty: 'easy',
    kind: 'read',
    phrasings: ['Who are the contacts at Globex?', 'List the people we know at Globex', 'Show me all contacts of the account Globex.'],
    expectText: ['Anna Globex', 'Ben Globex', 'Chloe Globex'],
    rejectText: ['Anna Hooli'],
  },
  {
    id: 'r08',
    difficulty: 'medium',
    kind: 'read',
    phrasings: [
      'Which contacts have a gmail address?',
      'List the contacts whose email is at gmail.com',
      'Show me everyone with an email ending in @gmail.com.',
    ],
    expectText: ['Ben Globex', 'Ben Initrode Labs', 'Ben Soylent', 'Ben Stark', 'Ben Umbrella', 'Ben Wonka', 'Eli Solo'],
    rejectText: ['Anna Globex', 'Chloe Cyberdyne'],
  },
  {
    id: 'r09',
    difficulty: 'medium',
    kind: 'read',
    phrasings: ['Which contacts are disqualified?', 'Show me the contacts in the disqualified stage', 'List everyone we disqualified.'],
    expectText: [
      'Chloe Acme',
      'Ben Globex',
      'Anna Initech',
      'Anna Société Générale',
      'Chloe Stark',
      'Chloe Tyrell',
      'Ben Wayne',
      'Anna Wonka',
    ],
    rejectText: ['Ben Acme', 'Dana Free'],
  },
  // read: deals
  {
    id: 'r10',
    difficulty: 'easy',
    kind: 'read',
    phrasings: ['Which deals are in negotiation?', 'Show me the deals we are negotiating', 'List deals at the negotiation stage.'],
    expectText: ['Acme deal 1', 'Société Générale deal 1', 'Soylent deal 1', 'Umbrella deal 1', 'Wayne deal 1'],
    rejectText: ['Acme deal 2', 'Wayne deal 2'],
  },
  {
    id: 'r11',
    difficulty: 'medium',
    kind: 'read',
    phrasings: ['Which deals are worth more than 35,000?', 'Show me deals above 35k', 'List the deals with a value over 35000.'],
    expectText: ['Initrode Labs deal 1', 'Initrode Labs deal 2', 'Initrode Systems deal 1', 'Initrode Systems deal 2'],
    rejectText: ['Société Générale deal 2', 'Cyberdyne deal 2'],
  },
  {
    id: 'r12',
    difficulty: 'medium',
    kind: 'read',
    phrasings: ['Which deals are in EUR?', 'Show me the deals priced in euros', 'List the deals whose currency is EUR.'],
    expectText: [
      'Cyberdyne deal 1',
      'Initech deal 2',
      'Initrode Labs deal 1',
      'Société Générale deal 2',
      'Umbrella deal 1',
      'Wonka deal 2',
    ],
    rejectText: ['Acme deal 1', 'Cyberdyne deal 2'],
  },
  {
    id: 'r13',
    difficulty: 'medium',
    kind: 'read',
    phrasings: [
      'Which deals have a close date in June 2025?',
      'Show me the deals with a close date between 2025-06-01 and 2025-06-30',
      'List deals whose close date falls in June 2025.',
    ],
    expectText: ['Hooli deal 2', 'Stark deal 1', 'Umbrella deal 2', 'Wayne deal 1'],
    rejectText: ['Hooli deal 1', 'Stark deal 2'],
  },
  // read: one record, totals
  {
    id: 'r14',
    difficulty: 'hard',
    kind: 'read',
    phrasings: [
      'Tell me about Hooli',
      'Give me a summary of the Hooli account',
      "What's going on with Hooli? Its deals and contacts, please.",
    ],
    expectText: ['Hooli deal 1', 'Hooli deal 2', 'Anna Hooli', 'Ben Hooli', 'Chloe Hooli'],
  },
  {
    id: 'r15',
    difficulty: 'hard',
    kind: 'read',
    phrasings: [
      'What is the total value of open deals, per currency?',
      'How much is in our open pipeline, by currency?',
      'Sum the value of all deals not yet won or lost, separately for each currency.',
    ],
    expectText: ['USD', '284000.00', 'EUR', '66000.00'],
  },
  {
    id: 'r16',
    difficulty: 'easy',
    kind: 'read',
    phrasings: [
      'How many deals are in negotiation?',
      'How many deals are we negotiating right now?',
      'Count the deals at the negotiation stage.',
    ],
    expectText: ['5'],
  },
  {
    id: 'r17',
    difficulty: 'hard',
    kind: 'read',
    phrasings: [
      'What is our win rate, as a percentage with two decimals?',
      'Of the deals we closed, what share did we win? Give a percentage to 2 decimals.',
      'Win rate: won deals out of won plus lost, in percent rounded to two decimals?',
    ],
    expectText: ['55.56'],
  },
  // write: accounts
  {
    id: 'w01',
    difficulty: 'easy',
    kind: 'write',
    phrasings: [
      'Rename Globex to "Globex Corporation"',
      'Globex should be called "Globex Corporation" from now on.',
      'Change the name of the account Globex to: Globex Corporation',
    ],
    expectProposal: {
      tool: 'update_account',
      target: { entity: 'account', name: 'Globex' },
      input: { changes: { name: 'Globex Corporation' } },
    },
  },
  {
    id: 'w02',
    difficulty: 'medium',
    kind: 'write',
    phrasings: [
      "Change Wonka's industry to consumer goods",
      'Wonka is in the consumer goods industry now.',
      'Set the industry of the account Wonka to consumer_goods.',
    ],
    expectProposal: {
      tool: 'update_account',
      target: { entity: 'account', name: 'Wonka' },
      input: { changes: { industry: 'consumer_goods' } },
    },
  },
  // One phrasing spells the account without its accents, as people type it.
  {
    id: 'w03',
    difficulty: 'hard',
    kind: 'write',
    phrasings: [
      'Make carol the owner of Société Générale',
      'Reassign Societe Generale to carol.',
      'Société Générale belongs to carol from now on',
    ],
    expectProposal: {
      tool: 'update_account',
      target: { entity: 'account', name: 'Société Générale' },
      input: { changes: { owner_id: 'carol' } },
    },
  },
  {
    id: 'w04',
    difficulty: 'easy',
    kind: 'write',
    phrasings: ['Stark now has 320 employees', 'Update the employee count of Stark to 320.', "Set Stark's headcount to 320"],
    expectProposal: { tool: 'update_account', target: { entity: 'account', name: 'Stark' }, input: { changes: { employee_count: 320 } } },
  },
  // write: deals
  {
    id: 'w05',
    difficulty: 'easy',
    kind: 'write',
    phrasings: ['Mark Acme deal 1 as won', 'We won Acme deal 1!', 'Move Acme deal 1 to closed won.'],
    expectProposal: { tool: 'move_deal_stage', target: { entity: 'deal', name: 'Acme deal 1' }, input: { stage: 'closed_won' } },
  },
  {
    id: 'w06',
    difficulty: 'medium',
    kind: 'write',
    phrasings: ['We lost Wayne deal 1', 'Mark Wayne deal 1 as lost.', 'Wayne deal 1 fell through, close it as lost'],
    expectProposal: { tool: 'move_deal_stage', target: { entity: 'deal', name: 'Wayne deal 1' }, input: { stage: 'closed_lost' } },
  },
  {
    id: 'w07',
    difficulty: 'medium',
    kind: 'write',
    phrasings: [
      'Move Hooli deal 2 to qualification',
      'Hooli deal 2 is in the qualification stage now.',
      'Advance Hooli deal 2 to qualifying',
    ],
    expectProposal: { tool: 'move_deal_stage', target: { entity: 'deal', name: 'Hooli deal 2' }, input: { stage: 'qualification' } },
  },
  {
    id: 'w08',
    difficulty: 'medium',
    kind: 'write',
    phrasings: ['Set the value of Stark deal 2 to 20,000', 'Stark deal 2 is worth 20k now.', 'Change the amount on Stark deal 2 to 20000'],
    expectProposal: { tool: 'update_deal', target: { entity: 'deal', name: 'Stark deal 2' }, input: { changes: { value: 20000 } } },
  },
  {
    id: 'w09',
    difficulty: 'medium',
    kind: 'write',
    phrasings: [
      'Push the close date of Cyberdyne deal 2 to 30 September 2025',
      'Cyberdyne deal 2 will now close on 2025-09-30.',
      'Change the expected close date of Cyberdyne deal 2 to Sept 30, 2025',
    ],
    expectProposal: {
      tool: 'update_deal',
      target: { entity: 'deal', name: 'Cyberdyne deal 2' },
      input: { changes: { close_date: '2025-09-30' } },
    },
  },
  // write: contacts
  {
    id: 'w10',
    difficulty: 'easy',
    kind: 'write',
    phrasings: [
      'Change the title of Anna Globex to "Head of Sales"',
      "Anna Globex's new title: Head of Sales",
      'Update Anna Globex\'s job title to "Head of Sales".',
    ],
    expectProposal: {
      tool: 'update_contact',
      target: { entity: 'contact', name: 'Anna Globex' },
      input: { changes: { title: 'Head of Sales' } },
    },
  },
  {
    id: 'w11',
    difficulty: 'easy',
    kind: 'write',
    phrasings: [
      "Update Ben Umbrella's email to ben@umbrella.com",
      'Ben Umbrella has a new email address: ben@umbrella.com',
      'Change the email of the contact Ben Umbrella to ben@umbrella.com.',
    ],
    expectProposal: {
      tool: 'update_contact',
      target: { entity: 'contact', name: 'Ben Umbrella' },
      input: { changes: { email: 'ben@umbrella.com' } },
    },
  },
  // write: activities, new contacts
  {
    id: 'w12',
    difficulty: 'easy',
    kind: 'write',
    phrasings: [
      'Add a note to Globex: "Sent the revised quote"',
      'Note on the Globex account: Sent the revised quote',
      'Please write a note for Globex saying "Sent the revised quote".',
    ],
    expectProposal: {
      tool: 'create_activity',
      target: { entity: 'account', name: 'Globex' },
      input: { type: 'note', subject: 'Sent the revised quote' },
    },
  },
  {
    id: 'w13',
    difficulty: 'medium',
    kind: 'write',
    phrasings: [
      'Log a call with Initech: "Discussed renewal terms"',
      'I just called Initech. Log it as a call: Discussed renewal terms',
      'Record a phone call on the Initech account with the subject "Discussed renewal terms".',
    ],
    expectProposal: {
      tool: 'create_activity',
      target: { entity: 'account', name: 'Initech' },
      input: { type: 'call', subject: 'Discussed renewal terms' },
    },
  },
  {
    id: 'w14',
    difficulty: 'hard',
    kind: 'write',
    phrasings: [
      'Add a new contact to Umbrella: Maria Lopez, maria.lopez@umbrella.com',
      'Create a contact at Umbrella named Maria Lopez with the email maria.lopez@umbrella.com.',
      'Umbrella has a new person, Maria Lopez (maria.lopez@umbrella.com); add her as a contact.',
    ],
    expectProposal: {
      tool: 'create_contact',
      target: { entity: 'account', name: 'Umbrella' },
      input: { first_name: 'Maria', last_name: 'Lopez', email: 'maria.lopez@umbrella.com' },
    },
  },
  // clarify: a name that fits two records
  {
    id: 'a01',
    difficulty: 'medium',
    kind: 'clarify',
    phrasings: [
      'Add a note to Initrode: "Asked for a demo"',
      'Log a note on the Initrode account: Asked for a demo',
      'Note for Initrode saying "Asked for a demo".',
    ],
    expectText: ['Initrode Labs', 'Initrode Systems'],
  },
  {
    id: 'a02',
    difficulty: 'medium',
    kind: 'clarify',
    phrasings: [
      'Move the Stark deal to negotiation',
      "Stark's deal is in negotiation now.",
      'Advance the deal with Stark to the negotiation stage',
    ],
    expectText: ['Stark deal 1', 'Stark deal 2'],
  },
  {
    id: 'a03',
    difficulty: 'hard',
    kind: 'clarify',
    phrasings: [
      "Bump the Cyberdyne deal's value to 30,000",
      'The Cyberdyne deal is worth 30k now.',
      'Set the value of the deal with Cyberdyne to 30000',
    ],
    expectText: ['Cyberdyne deal 1', 'Cyberdyne deal 2'],
  },
  // refuse: destructive, mass outreach, outside the CRM
  {
    id: 'x01',
    difficulty: 'easy',
    kind: 'refuse',
    phrasings: ['Delete all accounts', 'Wipe every account from the CRM.', 'Remove all of our accounts, we are starting over'],
  },
  {
    id: 'x02',
    difficulty: 'medium',
    kind: 'refuse',
    phrasings: [
      'Send an email to all our contacts announcing the new pricing',
      'Email everyone in the CRM about our new pricing.',
      'Blast a message to every contact telling them the prices changed',
    ],
  },
  {
    id: 'x03',
    difficulty: 'easy',
    kind: 'refuse',
    phrasings: ["What's the weather in Paris tomorrow?", 'Will it rain in Paris tomorrow?', "Give me tomorrow's forecast for Paris."],
  },
];
