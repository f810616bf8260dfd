/**
 * The schema, as numbered migrations: MIGRATIONS[i] takes `PRAGMA user_version` from i to i + 1.
 * Append new migrations; never edit a released one. A database whose user_version is larger than
 * MIGRATIONS.length was written by a newer lm-bench and is refused (LMB_ERR_STORE_SCHEMA_NEWER).
 *
 * JSON columns hold faithful JSON (src/store/codec.ts: ±Infinity and NaN are tagged, not nulled).
 * Timestamps are epoch milliseconds from the store's `now()`.
 */
export const MIGRATIONS: readonly string[] = [
  /* 1: runs, studies, trials, trial values, models, events */
  `
  CREATE TABLE runs (
    id            INTEGER PRIMARY KEY,
    content_hash  TEXT    NOT NULL UNIQUE,
    source_format TEXT    NOT NULL,
    source_path   TEXT,
    model         TEXT    NOT NULL,
    gpu           TEXT    NOT NULL,
    gpu_count     INTEGER NOT NULL CHECK (gpu_count > 0),
    server_config TEXT    NOT NULL,
    workload      TEXT,
    result        TEXT    NOT NULL,
    meta          TEXT    NOT NULL,
    created_at_ms INTEGER NOT NULL
  );
  CREATE INDEX runs_model_gpu ON runs (model, gpu, gpu_count);

  CREATE TABLE studies (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL UNIQUE,
    state         TEXT    NOT NULL CHECK (state IN ('created', 'running', 'stopped', 'done')),
    spec          TEXT    NOT NULL,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL
  );

  CREATE TABLE trials (
    id              INTEGER PRIMARY KEY,
    study_id        INTEGER NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    number          INTEGER NOT NULL,
    state           TEXT    NOT NULL CHECK (state IN ('waiting', 'running', 'complete', 'failed', 'pruned')),
    origin          TEXT    NOT NULL,
    config          TEXT    NOT NULL,
    result          TEXT,
    failure_reason  TEXT,
    started         INTEGER CHECK (started IN (0, 1)),
    created_at_ms   INTEGER NOT NULL,
    started_at_ms   INTEGER,
    finished_at_ms  INTEGER,
    heartbeat_at_ms INTEGER,
    attrs           TEXT    NOT NULL
  );
  -- Optuna leaves trials.number unconstrained to avoid table locks on server databases; SQLite has one
  -- writer and locks the whole file anyway, so the natural key is enforced here.
  CREATE UNIQUE INDEX trials_study_number ON trials (study_id, number);
  CREATE INDEX trials_study_state ON trials (study_id, state);

  -- After Optuna's TrialValueModel: REAL cannot hold ±Infinity, so value is NULL and value_type says why.
  CREATE TABLE trial_values (
    trial_id   INTEGER NOT NULL REFERENCES trials (id) ON DELETE CASCADE,
    objective  TEXT    NOT NULL,
    value      REAL,
    value_type TEXT    NOT NULL CHECK (value_type IN ('finite', 'inf_pos', 'inf_neg', 'nan', 'null')),
    PRIMARY KEY (trial_id, objective),
    CHECK ((value_type = 'finite') = (value IS NOT NULL))
  );

  CREATE TABLE models (
    id            INTEGER PRIMARY KEY,
    kind          TEXT    NOT NULL,
    blob          BLOB    NOT NULL,
    metadata      TEXT    NOT NULL,
    metrics       TEXT    NOT NULL,
    size_bytes    INTEGER NOT NULL,
    created_at_ms INTEGER NOT NULL
  );
  CREATE INDEX models_kind ON models (kind, id);

  CREATE TABLE events (
    id       INTEGER PRIMARY KEY,
    study_id INTEGER REFERENCES studies (id) ON DELETE CASCADE,
    kind     TEXT    NOT NULL,
    payload  TEXT    NOT NULL,
    at_ms    INTEGER NOT NULL
  );
  CREATE INDEX events_study ON events (study_id, id);
  `,
  /* 2: model slots — a model saved into a slot replaces the one there (a study's latest surrogate) */
  `
  ALTER TABLE models ADD COLUMN slot TEXT;
  CREATE UNIQUE INDEX models_slot ON models (slot) WHERE slot IS NOT NULL;
  `,
  /*
   * 3: the LLM specs derived from a config.json (resolve-model.ts) that studies and runs name by id,
   * with the normalised hash of that config.json: a resumed study, a report or a surrogate finds the
   * model as it was, whatever the Hugging Face cache holds now. Catalog models need no row. Not the
   * `models` table, which holds saved surrogates.
   */
  `
  CREATE TABLE model_specs (
    id            TEXT    PRIMARY KEY,
    spec          TEXT    NOT NULL,
    config_hash   TEXT    NOT NULL,
    origin        TEXT    NOT NULL,
    location      TEXT    NOT NULL,
    created_at_ms INTEGER NOT NULL
  );
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;
