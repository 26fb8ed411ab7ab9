// Every workflow the worker registers; the bundler starts here.
export * from './health';
