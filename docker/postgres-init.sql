-- Runs once, when the postgres volume is first initialised (docker-entrypoint-initdb.d),
-- as the superuser, after POSTGRES_DB (`app`, the service's database) has been created.
-- Temporal shares the server but keeps its own databases; its auto-setup image creates the
-- schemas in them (SKIP_DB_CREATE=true in docker-compose.yml, because they exist already).
CREATE DATABASE temporal;
CREATE DATABASE temporal_visibility;
