declare module 'swagger-ui-dist' {
  /** Directory holding the Swagger UI static assets. */
  export function getAbsoluteFSPath(): string;
}
