import type { GoldenQuestion } from './golden-set';

/**
 * Golden questions of the kinds a confident wrong answer came from (a value the organization lacks, a
 * negation, a field the CRM does not record, a ranking over groups, "without", fields of a joined record,
 * text by its start or end, one record's detail, a campaign's contacts), over the same seed as the golden
 * set (`seedGoldenCrm`). The rules are tuned on these; `bench/fixtures/assistants-heldout.json` is kept apart.
 */

const OPEN = "stage NOT IN ('closed_won', 'closed_lost')";
const NAME = "concat_ws(' ', first_name, last_name)";

export const GOLDEN_KINDS: GoldenQuestion[] = [
  // A value the organization does not have: a filter that finds nothing.
  {
    id: 'k01',
    difficulty: 'medium',
    question: 'How many deals do we have with Pied Piper?',
    phrasings: ['number of opportunities with Pied Piper', 'How many deals are there for Pied Piper?'],
    gold: "SELECT count(*) FROM deals d JOIN accounts a ON a.id = d.account_id WHERE a.name = 'Pied Piper'",
  },
  {
    id: 'k02',
    difficulty: 'medium',
    question: 'Show deals in Swiss francs',
    phrasings: ['which opportunities are priced in CHF', 'list our deals in francs'],
    gold: "SELECT name FROM deals WHERE currency = 'CHF'",
  },
  {
    id: 'k03',
    difficulty: 'easy',
    question: 'List accounts in the energy industry',
    phrasings: ['which companies are in energy?', 'energy sector accounts'],
    gold: "SELECT name FROM accounts WHERE industry = 'energy'",
  },
  {
    id: 'k04',
    difficulty: 'medium',
    question: 'How many contacts have the title Head of Growth?',
    phrasings: ['number of people with the job title Head of Growth', 'count contacts titled Head of Growth'],
    gold: "SELECT count(*) FROM contacts WHERE title = 'Head of Growth'",
  },
  {
    id: 'k05',
    difficulty: 'medium',
    question: 'How many deals does dave own?',
    phrasings: ['number of deals owned by dave', 'count the opportunities owned by dave'],
    gold: "SELECT count(*) FROM deals WHERE owner_id = 'dave'",
  },
  {
    id: 'k06',
    difficulty: 'medium',
    question: 'Which contacts work at Pied Piper?',
    phrasings: ['people at Massive Dynamic', 'list the contacts from Pied Piper'],
    gold: 'SELECT 1 WHERE false',
  },
  // Negation: NOT IN, never dropped nor inverted.
  {
    id: 'k07',
    difficulty: 'medium',
    question: 'How many deals are not won or lost?',
    phrasings: ['number of deals neither won nor lost', "count the deals that aren't won or lost"],
    gold: `SELECT count(*) FROM deals WHERE ${OPEN}`,
  },
  {
    id: 'k08',
    difficulty: 'medium',
    question: 'Which accounts are not in the Software industry?',
    phrasings: ['list the non-software companies', 'accounts whose industry is not software'],
    gold: "SELECT name FROM accounts WHERE industry IS DISTINCT FROM 'Software'",
  },
  {
    id: 'k09',
    difficulty: 'medium',
    question: 'How many activities are not calls?',
    phrasings: ['count activities other than calls', 'number of non-call activities'],
    gold: "SELECT count(*) FROM activities WHERE type <> 'call'",
  },
  {
    id: 'k10',
    difficulty: 'medium',
    question: 'Which deals are not owned by alice?',
    phrasings: ["deals whose owner isn't alice", "list deals except alice's"],
    gold: "SELECT name FROM deals WHERE owner_id IS DISTINCT FROM 'alice'",
  },
  {
    id: 'k11',
    difficulty: 'hard',
    question: 'How many open deals are not in negotiation?',
    phrasings: ['number of open opportunities that are not in the negotiation stage', 'open deals outside negotiation, how many'],
    gold: `SELECT count(*) FROM deals WHERE ${OPEN} AND stage <> 'negotiation'`,
  },
  // What the CRM does not record: said in one sentence, nothing answered in its place.
  {
    id: 'k12',
    difficulty: 'medium',
    kind: 'refuse',
    question: 'Which accounts are in Germany?',
    phrasings: ['accounts based in Berlin', 'how many customers do we have per country'],
    gold: '',
  },
  {
    id: 'k13',
    difficulty: 'medium',
    kind: 'refuse',
    question: 'List contacts by gender',
    phrasings: ['how many female contacts do we have', 'average age of our contacts'],
    gold: '',
  },
  {
    id: 'k14',
    difficulty: 'hard',
    kind: 'refuse',
    question: 'Which accounts were founded before 2000?',
    phrasings: ['accounts by founding year', 'How many deals did we lose to competitors?'],
    gold: '',
  },
  // Rankings over groups, with the number they rank by.
  {
    id: 'k15',
    difficulty: 'hard',
    question: 'Which industry has the fewest accounts?',
    phrasings: ['the industry with the fewest companies', 'what industry has the smallest number of accounts'],
    gold: 'SELECT industry, count(*) FROM accounts GROUP BY industry ORDER BY 2 ASC LIMIT 1',
  },
  {
    id: 'k16',
    difficulty: 'hard',
    question: 'Which rep owns the most deals?',
    phrasings: ['the owner with the most opportunities', 'who owns the most deals?'],
    gold: 'SELECT owner_id, count(*) FROM deals GROUP BY owner_id ORDER BY 2 DESC LIMIT 1',
  },
  {
    id: 'k17',
    difficulty: 'hard',
    question: 'Which campaign has the most contacts?',
    phrasings: ['the campaign with the most people to call', 'which calling campaign has the largest number of contacts'],
    gold: "SELECT 'Q4 upsell', 5",
  },
  {
    id: 'k18',
    difficulty: 'hard',
    question: 'Which stage has the most deals?',
    phrasings: ['the pipeline stage with the most opportunities', 'what stage holds the most deals'],
    gold: 'SELECT stage, count(*) FROM deals GROUP BY stage ORDER BY 2 DESC LIMIT 1',
  },
  // "Without", "never", "no ... at all".
  {
    id: 'k19',
    difficulty: 'hard',
    question: 'Which accounts have no open deals?',
    phrasings: ['accounts without an open deal', 'companies with no open opportunities at all'],
    gold: `SELECT name FROM accounts a WHERE NOT EXISTS (SELECT 1 FROM deals d WHERE d.account_id = a.id AND d.${OPEN})`,
  },
  {
    id: 'k20',
    difficulty: 'hard',
    question: 'Which accounts have never had a meeting?',
    phrasings: ['accounts without any meetings', 'companies we never met'],
    gold: "SELECT name FROM accounts a WHERE NOT EXISTS (SELECT 1 FROM activities x WHERE x.account_id = a.id AND x.type = 'meeting')",
  },
  {
    id: 'k21',
    difficulty: 'hard',
    question: 'How many accounts have never been called?',
    phrasings: ['number of companies with no calls', 'count the accounts we never called'],
    gold: "SELECT count(*) FROM accounts a WHERE NOT EXISTS (SELECT 1 FROM activities x WHERE x.account_id = a.id AND x.type = 'call')",
  },
  // Fields of a joined record.
  {
    id: 'k22',
    difficulty: 'hard',
    question: "List each won deal with its account's industry",
    phrasings: ['won deals and their account industry', 'show the won opportunities with the industry of their account'],
    gold: "SELECT d.name, a.industry FROM deals d LEFT JOIN accounts a ON a.id = d.account_id WHERE d.stage = 'closed_won'",
  },
  {
    id: 'k23',
    difficulty: 'medium',
    question: 'Contacts with their company name',
    phrasings: ['list contacts with their account', 'each contact and the account they belong to'],
    gold: `SELECT concat_ws(' ', c.first_name, c.last_name), a.name FROM contacts c LEFT JOIN accounts a ON a.id = c.account_id`,
  },
  {
    id: 'k24',
    difficulty: 'hard',
    question: 'Show open deals with their account owner',
    phrasings: ["open deals with the account's owner", 'each open opportunity and who owns its account'],
    gold: `SELECT d.name, a.owner_id FROM deals d LEFT JOIN accounts a ON a.id = d.account_id WHERE d.${OPEN}`,
  },
  // Text by its start or end.
  {
    id: 'k25',
    difficulty: 'medium',
    question: 'Which accounts have a .fr domain?',
    phrasings: ['accounts whose domain ends with .fr', 'companies on .fr'],
    gold: "SELECT name FROM accounts WHERE domain LIKE '%.fr'",
  },
  {
    id: 'k26',
    difficulty: 'medium',
    question: 'Accounts whose name starts with W',
    phrasings: ['companies starting with W', 'list accounts with a name beginning with W'],
    gold: "SELECT name FROM accounts WHERE name ILIKE 'W%'",
  },
  {
    id: 'k27',
    difficulty: 'medium',
    question: 'Contacts whose email ends with .io',
    phrasings: ['people with a .io email address', 'contacts with emails ending in .io'],
    gold: `SELECT ${NAME} FROM contacts WHERE email LIKE '%.io'`,
  },
  // One record's detail.
  {
    id: 'k28',
    difficulty: 'easy',
    question: 'What industry is Hooli in?',
    phrasings: ["Hooli's industry", 'which sector is Hooli in'],
    gold: "SELECT industry FROM accounts WHERE name = 'Hooli'",
  },
  {
    id: 'k29',
    difficulty: 'easy',
    question: 'Who owns Wonka?',
    phrasings: ['owner of the Wonka account', "who is Wonka's account owner"],
    gold: "SELECT owner_id FROM accounts WHERE name = 'Wonka'",
  },
  {
    id: 'k30',
    difficulty: 'easy',
    question: "What is Stark's domain?",
    phrasings: ['the web domain of Stark', 'Stark website domain'],
    gold: "SELECT domain FROM accounts WHERE name = 'Stark'",
  },
  {
    id: 'k31',
    difficulty: 'medium',
    question: 'When does Acme deal 1 close?',
    phrasings: ['close date of Acme deal 1', 'when is Acme deal 1 expected to close'],
    gold: "SELECT close_date FROM deals WHERE name = 'Acme deal 1'",
  },
  {
    id: 'k32',
    difficulty: 'medium',
    question: "What is Anna Hooli's job title?",
    phrasings: ['title of Anna Hooli', 'the job title of Anna Hooli'],
    gold: "SELECT title FROM contacts WHERE first_name = 'Anna' AND last_name = 'Hooli'",
  },
  // A campaign's contacts.
  {
    id: 'k33',
    difficulty: 'medium',
    question: 'How many contacts are in the Q4 upsell campaign?',
    phrasings: ['number of people in the Q4 upsell campaign', 'how many contacts does the Q4 upsell campaign call'],
    gold: 'SELECT 5',
  },
  {
    id: 'k34',
    difficulty: 'medium',
    question: 'How many campaign contacts are still pending?',
    phrasings: ['number of campaign contacts waiting to be called', 'pending campaign contacts, how many'],
    gold: 'SELECT 7',
  },
  // What will be: not in the data.
  {
    id: 'k35',
    difficulty: 'easy',
    kind: 'refuse',
    question: 'What will our revenue be next quarter?',
    phrasings: ['forecast next year bookings', 'predict which deals we will win'],
    gold: '',
  },
];
