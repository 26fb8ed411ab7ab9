// Every workflow the worker registers; the bundler starts here.
export * from './health';
export * from './agents';
export * from './accounts';
export * from './campaigns';
export * from './campaign-dispatch';
export * from './credentials';
export * from './meetings';
export * from './knowledge-base';
export * from './notifications';
export * from './intelligence';
export * from './readiness';
export * from './outreach-sequences';
export * from './outreach-imap';
export * from './ai-chat';
export * from './analytics-assistant';
export * from './webhooks';
export * from './conversations';
