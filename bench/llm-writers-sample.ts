import { defaultAgentConfig } from '../domain/agent-config';
import type { CompareInput, InstructionInputs, PageProfile } from '../platform/adapters/llm/llm';

// A small, fixed sample of each LlmWriter feature, judged by reading both writers' outputs side by side
// (bench/llm-writers.ts prints them; the verdicts are in docs/decisions/language-model.md).

const base = defaultAgentConfig();

export const COMPARE_SAMPLE: CompareInput[] = [
  {
    agentName: 'Front desk',
    from: { version: 1, published: true, config: base, instruction_builder_inputs: null },
    to: {
      version: 2,
      published: false,
      config: { ...base, llm: { ...base.llm, temperature: 0.2 }, first_message: 'Welcome to Acme Plumbing, how can I help?' },
      instruction_builder_inputs: { company_name: 'Acme Plumbing' },
    },
  },
  {
    agentName: 'Dental reception',
    from: { version: 3, published: true, config: { ...base, instructions: 'Book cleanings. Be brief.' }, instruction_builder_inputs: null },
    to: {
      version: 4,
      published: false,
      config: {
        ...base,
        instructions: 'Book cleanings and check-ups. Never give medical advice.',
        voice: { ...base.voice, voice_id: 'warm-female-2', speed: 0.9 },
        recording: { ...base.recording, enabled: false },
      },
      instruction_builder_inputs: null,
    },
  },
  {
    agentName: 'After hours',
    from: { version: 7, published: true, config: base, instruction_builder_inputs: null },
    to: { version: 8, published: false, config: base, instruction_builder_inputs: null },
  },
];

export const INSTRUCTIONS_SAMPLE: InstructionInputs[] = [
  {
    company_name: 'Acme Plumbing',
    company_website: 'https://acme-plumbing.example',
    agent_role: 'Receptionist who books repair visits',
    goals: ['Book a repair visit', 'Collect the caller address and phone number'],
    tone: 'calm and friendly',
    key_facts: ['Open Monday to Saturday, 7am to 7pm', 'Emergency call-out fee is $90'],
    faqs: [{ question: 'Do you work on Sundays?', answer: 'Only for emergencies.' }],
    guardrails: ['Never quote a repair price'],
  },
  {
    company_name: 'Bright Smile Dental',
    agent_role: 'Front desk for a dental clinic',
    goals: ['Book cleanings and check-ups'],
    key_facts: ['Two dentists: Dr. Lee and Dr. Patel', 'New patients welcome'],
    guardrails: ['Never give medical advice', 'Send emergencies to 911'],
    language: 'English',
  },
  { company_name: 'Nordlicht GmbH' },
];

export const SUMMARY_SAMPLE: PageProfile[] = [
  {
    url: 'https://fieldflow.example',
    title: 'FieldFlow - field service software',
    description: 'FieldFlow helps plumbing and HVAC companies schedule technicians, send quotes and get paid.',
    headings: ['Scheduling and dispatch', 'Quotes and invoices', 'Customer portal', 'Pricing'],
    text: 'FieldFlow is used by 2,000 service companies in the US and Canada. Plans start at $49 per technician per month. Integrates with QuickBooks and Stripe.',
  },
  {
    url: 'https://kornblume.example',
    title: 'Bäckerei Kornblume',
    description: null,
    headings: ['Unsere Brote', 'Öffnungszeiten', 'Kontakt'],
    text: 'Family bakery in Leipzig since 1952. Sourdough breads, cakes and a café. Open daily from 6am.',
  },
  {
    url: 'https://example.com',
    title: 'Example Domain',
    description: null,
    headings: [],
    text: 'This domain is for use in illustrative examples in documents.',
  },
];
