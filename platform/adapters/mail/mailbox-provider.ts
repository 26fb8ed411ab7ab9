import { createMailcowProvider } from './mailbox-provider-mailcow';
import { MailboxProviderError, type MailboxProvider, type ProvisionRequest, type ProvisionedMailbox } from './mailbox-provider-types';

// Mailbox providers create mailboxes on a domain the organization owns. The `simulated` built-in
// creates nothing outside: its mailboxes deliver to `.eml` files under DATA_DIR (see services/outreach/mailboxes.ts).

export { MailboxProviderError, type MailboxProvider, type ProvisionRequest, type ProvisionedMailbox };

export function createSimulatedMailboxProvider(): MailboxProvider {
  return {
    name: 'simulated',
    provision: async (request) => ({ emailAddress: `${request.localPart}@${request.domain}`.toLowerCase(), kind: 'simulated' }),
  };
}

export function createMailboxProvider(config: {
  OUTREACH_MAILBOX_PROVIDER: 'simulated' | 'mailcow';
  OUTREACH_MAILBOX_PROVIDER_BASE_URL?: string;
  OUTREACH_MAILBOX_PROVIDER_API_KEY?: string;
}): MailboxProvider {
  switch (config.OUTREACH_MAILBOX_PROVIDER) {
    case 'simulated':
      return createSimulatedMailboxProvider();
    case 'mailcow':
      return createMailcowProvider({
        baseUrl: config.OUTREACH_MAILBOX_PROVIDER_BASE_URL!,
        apiKey: config.OUTREACH_MAILBOX_PROVIDER_API_KEY!,
      });
  }
}
