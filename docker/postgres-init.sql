-- Runs once, when the postgres volume is first initialised (docker-entrypoint-initdb.d),
-- as the superuser, after POSTGRES_DB (`app`, the service's database) has been created.
-- Temporal shares the server but keeps its own databases; the one-shot `temporal-schema` service of
-- docker-compose.yml creates and updates the schemas in them (temporal-sql-tool).
CREATE DATABASE temporal;
CREATE DATABASE temporal_visibility;
