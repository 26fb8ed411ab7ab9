// The API's door to how Postgres failed: routes and middleware never import db/ (.dependency-cruiser.cjs).
export { invalidValue, isDatabaseUnavailable } from '../db/database-errors';
