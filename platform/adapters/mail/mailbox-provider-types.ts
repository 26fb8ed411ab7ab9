// What every mailbox provider adapter answers (platform/adapters/mail/mailbox-provider.ts picks one from the configuration).

export interface ProvisionRequest {
  domain: string;
  localPart: string;
  displayName: string | null;
}

export interface ProvisionedMailbox {
  emailAddress: string;
  /** `simulated`: delivery to files; `smtp`: the provider's SMTP (and IMAP) settings and password. */
  kind: 'simulated' | 'smtp';
  smtp?: { host: string; port: number; secure: boolean; username: string };
  imap?: { host: string; port: number; secure: boolean; username: string };
  password?: string;
}

export interface MailboxProvider {
  /** As responses and logs name it. */
  readonly name: string;
  provision(request: ProvisionRequest): Promise<ProvisionedMailbox>;
}

export class MailboxProviderError extends Error {}
