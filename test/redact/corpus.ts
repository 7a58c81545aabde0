// The redaction corpus (issue 30): positives (a secret of every rule, in plain text, in JSON
// text with escapes that hide it, and as an argv) and negatives (real-looking code, commands and
// logs that hold no secret: hashes, UUIDs, base64 images, identifiers, config names). Generated
// from a seeded PRNG, so the same corpus every run. Every token here is FAKE: random characters
// in a provider's public shape, never a real credential.
//
// This module shares no code with src/redact/: it knows the shapes from the providers' public
// documentation and gitleaks' examples, not from the rules it checks.

export type Form = 'plain' | 'escaped' | 'argv';

export interface Positive {
  readonly id: string;
  /** The rule (the marker kind) this positive exercises. */
  readonly rule: string;
  readonly form: Form;
  /** The tool call's input: JSON text of an object (as a harness would send it). */
  readonly input: string;
  /** The secret, decoded: no piece of it may survive in what is stored. */
  readonly secret: string;
}

export interface Negative {
  readonly id: string;
  readonly what: string;
  /** The tool call's input: JSON text of an object. */
  readonly input: string;
}

/** mulberry32: a small seeded PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const UPPER_NUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const LOWER_NUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
const HEX = '0123456789abcdef';
const B64 = `${ALNUM}+/`;
const URLSAFE = `${ALNUM}-_`;
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function maker(seed: number): (alphabet: string, n: number) => string {
  const rnd = prng(seed);
  return (alphabet, n) => {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(rnd() * alphabet.length)];
    // A random token of letters and digits holds both (as real ones do): no all-letter accident.
    if (alphabet === ALNUM && n >= 8 && !/[0-9]/.test(s)) s = `${s.slice(0, -1)}7`;
    return s;
  };
}

const r = maker(20261206);
const b32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const uuid = (): string => `${r(HEX, 8)}-${r(HEX, 4)}-4${r(HEX, 3)}-a${r(HEX, 3)}-${r(HEX, 12)}`;

/** Vendor shapes: [rule, make a fake token]. */
const SHAPES: ReadonlyArray<readonly [string, () => string | { text: string; secret: string }]> = [
  ['private_key', () => `-----BEGIN RSA PRIVATE KEY-----\nMIIEow${r(B64, 58)}\n${r(B64, 64)}\n${r(B64, 40)}==\n-----END RSA PRIVATE KEY-----`],
  ['private_key', () => `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA${r(B64, 50)}\n${r(B64, 70)}\n-----END OPENSSH PRIVATE KEY-----`],
  ['age_secret_key', () => `AGE-SECRET-KEY-1${r('QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L', 58)}`],
  ['anthropic_key', () => `sk-ant-api03-${r(URLSAFE, 93)}AA`],
  ['anthropic_key', () => `sk-ant-admin01-${r(URLSAFE, 93)}AA`],
  ['openai_key', () => `sk-proj-${r(URLSAFE, 74)}T3BlbkFJ${r(URLSAFE, 74)}`],
  ['openai_key', () => `sk-${r(ALNUM, 20)}T3BlbkFJ${r(ALNUM, 20)}`],
  ['openai_key', () => `sk-svcacct-${r(URLSAFE, 58)}T3BlbkFJ${r(URLSAFE, 58)}`],
  ['xai_key', () => `xai-${r(ALNUM, 80)}`],
  ['groq_key', () => `gsk_${r(ALNUM, 52)}`],
  ['perplexity_key', () => `pplx-${r(ALNUM, 48)}`],
  ['replicate_token', () => `r8_${r(ALNUM, 37)}`],
  ['huggingface_token', () => `hf_${r(LETTERS, 34)}`],
  ['huggingface_token', () => `api_org_${r(LETTERS, 34)}`],
  ['google_api_key', () => `AIza${r(URLSAFE, 35)}`],
  ['google_oauth', () => `ya29.a0${r(URLSAFE, 120)}`],
  ['google_oauth', () => `GOCSPX-${r(URLSAFE, 28)}`],
  ['github_token', () => `ghp_${r(ALNUM, 36)}`],
  ['github_token', () => `gho_${r(ALNUM, 36)}`],
  ['github_token', () => `ghs_${r(ALNUM, 36)}`],
  ['github_token', () => `github_pat_11${r(UPPER_NUM, 20)}_${r(ALNUM, 59)}`],
  ['gitlab_token', () => `glpat-${r(URLSAFE, 20)}`],
  ['gitlab_token', () => `glrt-${r(URLSAFE, 20)}`],
  ['gitlab_token', () => `GR1348941${r(URLSAFE, 20)}`],
  ['gitlab_session', () => { const s = r(LOWER_NUM, 32); return { text: `_gitlab_session=${s}`, secret: s }; }],
  ['bitbucket_token', () => `ATATT3xFfGF0${r(URLSAFE, 180)}=${r(HEX, 8).toUpperCase()}`],
  ['npm_token', () => `npm_${r(ALNUM, 36)}`],
  ['pypi_token', () => `pypi-AgEIcHlwaS5vcmc${r(URLSAFE, 120)}`],
  ['rubygems_token', () => `rubygems_${r(HEX, 48)}`],
  ['clojars_token', () => `CLOJARS_${r(LOWER_NUM, 60)}`],
  ['docker_token', () => `dckr_pat_${r(URLSAFE, 27)}`],
  ['artifactory_token', () => `AKCp8${r(ALNUM, 68)}`],
  ['aws_access_key', () => `AKIA${r(b32, 16)}`],
  ['aws_access_key', () => `ASIA${r(b32, 16)}`],
  ['aws_bedrock_key', () => `ABSK${r(B64, 132)}`],
  ['azure_client_secret', () => `${r(ALNUM, 3)}8Q~${r(ALNUM, 34)}`],
  ['azure_sas', () => { const s = `${r(ALNUM, 43)}%3D`; return { text: `https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2027-01-01&sig=${s}`, secret: s }; }],
  ['azure_account_key', () => { const s = `${r(B64, 86)}==`; return { text: `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${s};EndpointSuffix=core.windows.net`, secret: s }; }],
  ['alibaba_access_key', () => `LTAI${r(ALNUM, 20)}`],
  ['digitalocean_token', () => `dop_v1_${r(HEX, 64)}`],
  ['cloudflare_origin_ca', () => `v1.0-${r(HEX, 24)}-${r(HEX, 146)}`],
  ['heroku_key', () => `HRKU-AA${r(URLSAFE, 58)}`],
  ['flyio_token', () => `fo1_${r(URLSAFE, 43)}`],
  ['vercel_token', () => `vcp_${r(ALNUM, 56)}`],
  ['netlify_token', () => `nfp_${r(ALNUM, 40)}`],
  ['render_token', () => `rnd_${r(ALNUM, 32)}`],
  ['supabase_token', () => `sbp_${r(HEX, 40)}`],
  ['planetscale_token', () => `pscale_tkn_${r(URLSAFE, 43)}`],
  ['databricks_token', () => `dapi${r(HEX, 32)}`],
  ['clickhouse_cloud_key', () => `4b1d${r(ALNUM, 38)}`],
  ['hashicorp_token', () => `${r(LOWER_NUM, 14)}.atlasv1.${r(URLSAFE, 67)}`],
  ['hashicorp_token', () => `hvs.${r(URLSAFE, 95)}`],
  ['doppler_token', () => `dp.pt.${r(ALNUM, 43)}`],
  ['pulumi_token', () => `pul-${r(HEX, 40)}`],
  ['prefect_token', () => `pnu_${r(ALNUM, 36)}`],
  ['infracost_token', () => `ico-${r(ALNUM, 32)}`],
  ['octopus_key', () => `API-${r(UPPER_NUM, 26)}`],
  ['openshift_token', () => `sha256~${r(URLSAFE, 43)}`],
  ['buildkite_token', () => `bkua_${r(HEX, 40)}`],
  ['circleci_token', () => `CCIPAT_${r(ALNUM, 22)}_${r(HEX, 40)}`],
  ['sentry_token', () => `sntryu_${r(HEX, 64)}`],
  ['grafana_token', () => `glsa_${r(ALNUM, 32)}_${r(HEX, 8)}`],
  ['grafana_token', () => `glc_${r(ALNUM, 80)}`],
  ['newrelic_key', () => `NRAK-${r(UPPER_NUM, 27)}`],
  ['dynatrace_token', () => `dt0c01.${r(UPPER_NUM, 24)}.${r(ALNUM, 64)}`],
  ['postman_key', () => `PMAK-${r(HEX, 24)}-${r(HEX, 34)}`],
  ['linear_key', () => `lin_api_${r(ALNUM, 40)}`],
  ['notion_token', () => `ntn_${r('0123456789', 11)}${r(ALNUM, 35)}`],
  ['figma_token', () => `figd_${r(URLSAFE, 40)}`],
  ['stripe_key', () => `sk_live_51${r(ALNUM, 97)}`],
  ['stripe_key', () => `rk_live_51${r(ALNUM, 97)}`],
  ['stripe_key', () => `sk_test_4eC39HqLyjWDarjtT1zdp7dc${r(ALNUM, 6)}`],
  ['stripe_key', () => `whsec_${r(ALNUM, 32)}`],
  ['square_token', () => `EAAA${r(URLSAFE, 60)}`],
  ['shopify_token', () => `shpat_${r(HEX, 32)}`],
  ['shippo_token', () => `shippo_live_${r(HEX, 40)}`],
  ['easypost_token', () => `EZAK${r(ALNUM, 54)}`],
  ['duffel_token', () => `duffel_live_${r(ALNUM, 43)}`],
  ['flutterwave_key', () => `FLWSECK_TEST-${r(HEX, 32)}-X`],
  ['plaid_token', () => `access-sandbox-${uuid()}`],
  ['sendgrid_key', () => `SG.${r(URLSAFE, 22)}.${r(URLSAFE, 43)}`],
  ['sendinblue_key', () => `xkeysib-${r(HEX, 64)}-${r(ALNUM, 16)}`],
  ['mailgun_key', () => `key-${r(HEX, 32)}`],
  ['mailchimp_key', () => `${r(HEX, 32)}-us21`],
  ['twilio_key', () => `SK${r(HEX, 32)}`],
  ['slack_token', () => `xoxb-${r('0123456789', 12)}-${r('0123456789', 13)}-${r(ALNUM, 24)}`],
  ['slack_token', () => `xoxp-${r('0123456789', 12)}-${r('0123456789', 12)}-${r('0123456789', 13)}-${r(HEX, 32)}`],
  ['slack_token', () => `xapp-1-A${r(UPPER_NUM, 10)}-${r('0123456789', 13)}-${r(HEX, 64)}`],
  ['slack_webhook', () => { const s = `T${r(UPPER_NUM, 10)}/B${r(UPPER_NUM, 10)}/${r(ALNUM, 24)}`; return { text: `https://hooks.slack.com/services/${s}`, secret: s }; }],
  ['discord_webhook', () => { const s = `${r('0123456789', 19)}/${r(URLSAFE, 68)}`; return { text: `https://discord.com/api/webhooks/${s}`, secret: s }; }],
  ['teams_webhook', () => { const s = `${uuid()}@${uuid()}/IncomingWebhook/${r(HEX, 32)}/${uuid()}`; return { text: `https://contoso.webhook.office.com/webhookb2/${s}`, secret: s }; }],
  ['telegram_token', () => `${r('0123456789', 10)}:AA${r(URLSAFE, 33)}`],
  ['jwt', () => `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ${r(URLSAFE, 60)}.${r(URLSAFE, 43)}`],
  ['onepassword_token', () => `ops_eyJ${r(B64, 300)}`],
];

/** The parts of a secret that must not survive (a secret is the whole value: no piece of 5+ characters is left). */
export function pieces(secret: string): string[] {
  return secret.split(/[^A-Za-z0-9]+/).filter((p) => p.length >= 5);
}

/** A secret written in JSON text with escapes that hide it: its first character as \uXXXX, every / as \/. */
function escapedJson(value: unknown, secret: string): string {
  const plain = JSON.stringify(value);
  const enc = JSON.stringify(secret).slice(1, -1);
  const hidden = `\\u${secret.charCodeAt(0).toString(16).padStart(4, '0')}${enc.slice(1)}`.replace(/\//g, '\\/');
  const at = plain.indexOf(enc);
  if (at < 0) throw new Error(`corpus: secret not in ${plain}`);
  return (plain.slice(0, at) + hidden + plain.slice(at + enc.length)).replace(/(?<!\\)\//g, '\\/');
}

/** Neutral contexts for a vendor token (no name that says secret): the rule must know the shape. */
const SHAPE_CONTEXTS: ReadonlyArray<(t: string) => string> = [
  (t) => `echo '${t}' > /tmp/out.txt`,
  (t) => `grep -rn "${t}" src/ logs/`,
  (t) => `printf %s ${t} | pbcopy`,
];

const positives: Positive[] = [];
const negatives: Negative[] = [];

function addPositive(rule: string, text: string, secret: string, argv: readonly string[]): void {
  const n = positives.length;
  positives.push({ id: `p${n}-plain`, rule, form: 'plain', input: JSON.stringify({ command: text, description: 'run it' }), secret });
  positives.push({ id: `p${n}-escaped`, rule, form: 'escaped', input: escapedJson({ command: text, description: 'run it' }, secret), secret });
  positives.push({ id: `p${n}-argv`, rule, form: 'argv', input: JSON.stringify({ argv }), secret });
}

SHAPES.forEach(([rule, make], i) => {
  const made = make();
  const { text: t, secret } = typeof made === 'string' ? { text: made, secret: made } : made;
  const ctx = SHAPE_CONTEXTS[i % SHAPE_CONTEXTS.length] as (t: string) => string;
  addPositive(rule, ctx(t), secret, ['printf', '%s', t]);
});

// Named and command-line forms: [rule, plain text, secret, argv].
const pw = (): string => `${r(ALNUM, 6)}!${r(ALNUM, 5)}`;
const tok = (): string => r(ALNUM, 32);
const NAMED: ReadonlyArray<() => readonly [string, string, string, readonly string[]]> = [
  () => { const s = r(B64, 24) + '=='; return ['auth_header', `curl -H "Authorization: Basic ${s}" https://api.example.com/v1/me`, s, ['curl', '-H', `Authorization: Basic ${s}`, 'https://api.example.com/v1/me']]; },
  () => { const s = r(LETTERS, 40); return ['auth_header', `curl -H 'Authorization: Bearer ${s}' https://api.example.com`, s, ['curl', '-H', `Authorization: Bearer ${s}`, 'https://api.example.com']]; },
  () => { const s = r(HEX, 40); return ['auth_header', `http GET api.example.com/user 'Authorization: token ${s}'`, s, ['http', 'GET', 'api.example.com/user', `Authorization: token ${s}`]]; },
  () => { const s = tok(); return ['secret_field', `curl -H "X-Api-Key: ${s}" https://api.example.com`, s, ['curl', '-H', `X-Api-Key: ${s}`, 'https://api.example.com']]; },
  () => { const s = tok(); return ['secret_field', `curl https://api.anthropic.com/v1/models -H "x-api-key: ${s}"`, s, ['curl', 'https://api.anthropic.com/v1/models', '-H', `x-api-key: ${s}`]]; },
  () => { const s = tok(); return ['secret_field', `curl -H "PRIVATE-TOKEN: ${s}" https://gitlab.example.com/api/v4/projects`, s, ['curl', '-H', `PRIVATE-TOKEN: ${s}`, 'https://gitlab.example.com/api/v4/projects']]; },
  () => { const s = pw(); return ['curl_user', `curl -u deploy:${s} https://nexus.example.com/repo`, s, ['curl', '-u', `deploy:${s}`, 'https://nexus.example.com/repo']]; },
  () => { const s = pw(); return ['curl_user', `curl --user "admin:${s}" -X POST https://jenkins.example.com/job/build`, s, ['curl', '--user', `admin:${s}`, '-X', 'POST', 'https://jenkins.example.com/job/build']]; },
  () => { const s = `sk_live_51${r(ALNUM, 40)}`; return ['stripe_key', `curl https://api.stripe.com/v1/charges -u ${s}:`, s, ['curl', 'https://api.stripe.com/v1/charges', '-u', `${s}:`]]; },
  () => { const s = `rk_live_51${r(ALNUM, 40)}`; return ['stripe_key', `curl https://api.stripe.com/v1/customers -u ${s}: -d limit=3`, s, ['curl', 'https://api.stripe.com/v1/customers', '-u', `${s}:`, '-d', 'limit=3']]; },
  () => { const s = pw(); return ['cli_password', `mysql -h db.internal -u root -p${s} app_prod`, s, ['mysql', '-h', 'db.internal', '-u', 'root', `-p${s}`, 'app_prod']]; },
  () => { const s = pw(); return ['cli_password', `mysqldump -uroot -p${s} --single-transaction shop > dump.sql`, s, ['mysqldump', '-uroot', `-p${s}`, '--single-transaction', 'shop']]; },
  () => { const s = pw(); return ['cli_password', `sshpass -p '${s}' ssh deploy@10.0.0.12 uptime`, s, ['sshpass', '-p', s, 'ssh', 'deploy@10.0.0.12', 'uptime']]; },
  () => { const s = pw(); return ['cli_password', `docker login -u ci-bot -p ${s} registry.example.com`, s, ['docker', 'login', '-u', 'ci-bot', '-p', s, 'registry.example.com']]; },
  () => { const s = pw(); return ['cli_password', `redis-cli -h cache.internal -a ${s} INFO`, s, ['redis-cli', '-h', 'cache.internal', '-a', s, 'INFO']]; },
  () => { const s = pw(); return ['cli_password', `openssl pkcs12 -export -in cert.pem -out cert.p12 -passout pass:${s}`, s, ['openssl', 'pkcs12', '-export', '-in', 'cert.pem', '-out', 'cert.p12', '-passout', `pass:${s}`]]; },
  () => { const s = pw(); return ['secret_assignment', `MYSQL_PWD=${s} mysql -u root -e 'show databases'`, s, ['env', `MYSQL_PWD=${s}`, 'mysql', '-u', 'root']]; },
  () => { const s = pw(); return ['secret_assignment', `PGPASS=${s} psql -h db -U app`, s, ['env', `PGPASS=${s}`, 'psql', '-h', 'db']]; },
  () => { const s = pw(); return ['secret_assignment', `PGPASSWORD=${s} pg_dump -h db -U app app > app.sql`, s, ['env', `PGPASSWORD=${s}`, 'pg_dump', '-h', 'db']]; },
  () => { const s = `ab;Semi${r(ALNUM, 8)}`; return ['secret_assignment', `DB_PASSWORD=${s} ./run.sh`, s, ['env', `DB_PASSWORD=${s}`, './run.sh']]; },
  () => { const s = 'correct horse battery staple'; return ['secret_assignment', `PASSWORD='${s}' ./bin/setup`, s, ['env', `PASSWORD=${s}`, './bin/setup']]; },
  () => { const s = `wJalrXUtnFEMI/K7MDENG/${r(ALNUM, 18)}`; return ['aws_secret_key', `AWS_SECRET_ACCESS_KEY=${s} aws s3 ls`, s, ['env', `AWS_SECRET_ACCESS_KEY=${s}`, 'aws', 's3', 'ls']]; },
  () => { const s = tok(); return ['secret_assignment', `export DATADOG_API_KEY=${s}`, s, ['export', `DATADOG_API_KEY=${s}`]]; },
  () => { const s = tok(); return ['secret_assignment', `echo "SESSION_SECRET=${s}" >> .env`, s, ['echo', `SESSION_SECRET=${s}`]]; },
  () => { const s = pw(); return ['secret_assignment', `export REDIS_PASS="${s}"`, s, ['export', `REDIS_PASS=${s}`]]; },
  () => { const s = tok(); return ['secret_flag', `vault login --token=${s}`, s, ['vault', 'login', `--token=${s}`]]; },
  () => { const s = pw(); return ['secret_flag', `psql --password ${s} -h db`, s, ['psql', '--password', s, '-h', 'db']]; },
  () => { const s = tok(); return ['secret_flag', `terraform apply -var client_secret=${s}`, s, ['terraform', 'apply', '-var', `client_secret=${s}`]]; },
  () => { const s = tok(); return ['secret_flag', `datadog-ci sourcemaps upload --api-key ${s} ./dist`, s, ['datadog-ci', 'sourcemaps', 'upload', '--api-key', s, './dist']]; },
  () => { const s = pw(); return ['url_password', `psql postgres://admin:${s}@db.internal:5432/app`, s, ['psql', `postgres://admin:${s}@db.internal:5432/app`]]; },
  () => { const s = pw(); return ['url_password', `redis-cli -u redis://:${s}@cache.internal:6379/0 PING`, s, ['redis-cli', '-u', `redis://:${s}@cache.internal:6379/0`, 'PING']]; },
  () => { const s = `p&ss${r(ALNUM, 8)}`; return ['url_password', `migrate -database "mysql://app:${s}@tcp(db:3306)/app" up`, s, ['migrate', '-database', `mysql://app:${s}@tcp(db:3306)/app`, 'up']]; },
  () => { const s = tok(); return ['url_password', `git clone https://oauth2:${s}@gitlab.example.com/team/app.git`, s, ['git', 'clone', `https://oauth2:${s}@gitlab.example.com/team/app.git`]]; },
  () => { const s = pw(); return ['url_password', `mongosh "mongodb+srv://root:${s}@cluster0.example.net/admin"`, s, ['mongosh', `mongodb+srv://root:${s}@cluster0.example.net/admin`]]; },
  () => { const s = pw(); return ['netrc_password', `printf 'machine api.example.com login bot password ${s}\\n' >> ~/.netrc`, s, ['printf', `machine api.example.com login bot password ${s}`]]; },
  () => { const s = tok(); return ['secret_field', `cat > config.json <<EOF\n{"apiKey": "${s}", "region": "eu"}\nEOF`, s, ['node', '-e', `save({"apiKey": "${s}"})`]]; },
  () => { const s = pw(); return ['secret_field', `cat > docker-compose.override.yml <<EOF\n  db:\n    password: ${s}\nEOF`, s, ['yq', '-i', `.db.password: ${s}`]]; },
  () => { const s = tok(); return ['bearer_token', `the response said: Bearer ${s} was refused`, s, ['echo', 'Bearer', s]]; },
  () => { const s = `s-ghp_${r(ALNUM, 36)}`.slice(2); return ['github_token', `tool mcp__s-${s}__x failed`, s, ['call', `mcp__${s}__x`]]; },
];
for (const make of NAMED) {
  const [rule, text, secret, argv] = make();
  addPositive(rule, text, secret, argv);
}

// JSON fields of a tool's input object (an HTTP tool, an MCP server's config): the field's name is the context.
const FIELDS: ReadonlyArray<() => readonly [string, Record<string, unknown>, string]> = [
  () => { const s = r(B64, 28) + '='; return ['auth_header', { url: 'https://api.example.com/v1/me', headers: { Authorization: `Basic ${s}` } }, s]; },
  () => { const s = r(HEX, 40); return ['auth_header', { url: 'https://api.github.com/user', Authorization: `token ${s}` }, s]; },
  () => { const s = r(LETTERS, 32); return ['auth_header', { method: 'GET', headers: { authorization: `Bearer ${s}` } }, s]; },
  () => { const s = tok(); return ['secret_field', { url: 'https://api.example.com', headers: { 'X-Api-Key': s } }, s]; },
  () => { const s = pw(); return ['secret_field', { host: 'db.internal', user: 'app', password: s }, s]; },
  () => { const s = tok(); return ['secret_field', { mcpServers: { github: { command: 'npx', env: { GITHUB_PERSONAL_ACCESS_TOKEN: s } } } }, s]; },
  () => { const s = tok(); return ['secret_field', { client_id: 'web-app', client_secret: s }, s]; },
  () => { const s = `sk_live_51${r(ALNUM, 40)}`; return ['stripe_key', { file_path: 'src/pay.ts', old_string: 'const key = "";', new_string: `const key = "${s}";` }, s]; },
  () => { const s = `ghp_${r(ALNUM, 36)}`; return ['github_token', { event_id: s, note: 'user-supplied id' }, s]; },
];
for (const make of FIELDS) {
  const [rule, obj, secret] = make();
  const n = positives.length;
  positives.push({ id: `p${n}-plain`, rule, form: 'plain', input: JSON.stringify(obj), secret });
  positives.push({ id: `p${n}-escaped`, rule, form: 'escaped', input: escapedJson(obj, secret), secret });
}

// Negatives ------------------------------------------------------------------------------------

function addNegative(what: string, value: unknown): void {
  negatives.push({ id: `n${negatives.length}`, what, input: JSON.stringify(value) });
}

const WORDS = ['user', 'order', 'invoice', 'session', 'payment', 'report', 'upload', 'tenant', 'widget', 'account', 'catalog', 'profile'];
const w = (i: number): string => WORDS[i % WORDS.length] as string;

for (let i = 0; i < 40; i++) {
  const sha = r(HEX, 40);
  const cmds = [`git show ${sha}`, `git cherry-pick ${sha.slice(0, 12)}`, `git log --oneline ${sha}..HEAD`, `git revert --no-edit ${sha}`];
  addNegative('git commit hash', { command: cmds[i % cmds.length], description: 'inspect a commit' });
}
for (let i = 0; i < 30; i++) {
  const h = r(HEX, 64);
  const forms = [`sha256sum dist/app.tar.gz  # ${h}`, `docker pull ghcr.io/acme/api@sha256:${h}`, `echo "${h}  node-v22.tar.xz" | sha256sum -c`];
  addNegative('sha256 digest', { command: forms[i % forms.length] });
}
for (let i = 0; i < 30; i++) {
  const id = uuid();
  const forms = [`curl https://api.example.com/v1/${w(i)}s/${id}`, `psql -c "select * from ${w(i)}s where id = '${id}'"`, `kubectl logs pod/api-${id.slice(0, 8)} --since=1h`];
  addNegative('UUID', { command: forms[i % forms.length] });
}
for (let i = 0; i < 20; i++) {
  const img = `iVBORw0KGgoAAAANSUhEUgAA${r(B64, 400 + i * 10)}`;
  addNegative('base64 image', { file_path: `src/assets/${w(i)}.ts`, content: `export const ${w(i)}Icon = "data:image/png;base64,${img}";\n` });
}
for (let i = 0; i < 20; i++) {
  const b = r(B64, 120);
  addNegative('base64 blob in a test fixture', { file_path: `test/fixtures/${w(i)}.json`, content: `{"payload": "${b}", "encoding": "base64"}` });
}
const IDENTIFIERS = [
  'const tokenizer = new Tokenizer({ model: "cl100k_base" });',
  'let maxTokens = Math.min(limit, 4096);',
  'export function parseToken(input: string): Token { return lexer.next(input); }',
  'if (token.type === TokenType.Identifier) { return token.value; }',
  'def refresh_access_token(self, refresh_token: str) -> str:',
  'class PasswordResetForm(forms.Form):',
  'password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())',
  'token = request.headers.get("Authorization")',
  'api_key = os.environ["API_KEY"]',
  'api_key=os.environ["API_KEY"]',
  'const apiKey = process.env.OPENAI_API_KEY;',
  'token := os.Getenv("GITHUB_TOKEN")',
  'let secret = std::env::var("APP_SECRET").expect("APP_SECRET not set");',
  'password: string;',
  'secret: Option<String>,',
  'private readonly apiKey: string',
  'SECRET_KEY = config("SECRET_KEY")',
  'DATABASE_PASSWORD = get_secret("db-password")',
  'token = socket.assigns.token',
  'auth_token = Phoenix.Token.sign(socket, "user salt", user.id)',
  'password = input("Password: ")',
  'const { token } = await login(username, password);',
  'user.password = hashed',
  'self.api_key = api_key',
  'headers["Authorization"] = f"Bearer {token}"',
  'fetch(url, { credentials: "same-origin" })',
  'fetch(url, { credentials: "include", headers })',
  'KEY_PREFIX = "cache:v2:"',
  'primary_key = "id"',
  'sort_key: "created_at"',
  'fn record_type(&mut self, token: &TokenReference, ty: TypeKind) {',
  'func (s *Server) Verify(token *jwt.Token, key []byte) error {',
  'def login(username: str, password: str, api_key: Optional[str] = None) -> Session:',
  'export function sign(payload: object, secret: Buffer): string {',
  'constructor(private readonly token: TokenService, private readonly secret: SecretStore) {}',
  'impl From<ApiKey> for Credentials { fn from(key: ApiKey) -> Self { Self { key } } }',
];
IDENTIFIERS.forEach((code, i) => addNegative('code identifier', { file_path: `src/${w(i)}.py`, old_string: '', new_string: code }));
const CONFIG = [
  'SORT_KEY=created_at', 'S3_KEY=uploads/2026/12/avatar.png', 'CACHE_KEY_PREFIX=app', 'PASSWORD_MIN_LENGTH=12', 'TOKEN_TTL_SECONDS=3600',
  'MAX_TOKENS=4096', 'export GITHUB_TOKEN=$(gh auth token)', 'export NPM_TOKEN=${NPM_TOKEN}', 'TOKEN=${{ secrets.DEPLOY_TOKEN }}',
  'PASSWORD=%DB_PASS%', 'API_KEY=<your-api-key>', 'SECRET_KEY_BASE=changeme_later', 'AUTH_STRATEGY=oauth', 'JWT_ALGORITHM=HS256',
  'PWD=/home/dev/app', 'OLDPWD=/tmp', 'SSH_KEY_PATH=~/.ssh/id_ed25519', 'GPG_KEY_ID=ABCDEF12', 'KEY_FILE=./certs/server.key',
  'PRIMARY_KEY=id', 'PARTITION_KEY=tenant_id', 'I18N_KEY=checkout.title', 'TOKENIZERS_PARALLELISM=false', 'PASSWORD_AUTH=true',
  'SECRET_NAME=prod/db', 'DB_PASSWORD_FILE=/run/secrets/db_password', 'REDIS_PASSWORD=', 'TOKEN_URL=https://auth.example.com/oauth/token',
  'AWS_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID', 'CLIENT_SECRET=${CLIENT_SECRET:?missing}',
];
CONFIG.forEach((line, i) => addNegative('config name', { file_path: `.env.example.${i}`, content: `${line}\nAPP_NAME=demo\n` }));
const COMMANDS = [
  'mkdir -p build/out && cp -p a b', 'mysql -u root -p app_db', 'curl -u deploy https://nexus.example.com', 'ssh-keygen -t ed25519 -C "dev@example.com"',
  'kubectl get secrets -n prod', 'gh auth token | wc -c', 'python train.py --max-tokens 4096 --tokenizer gpt2', 'ssh -i ~/.ssh/id --key-file ./k.pem host',
  'npm install @types/node sk-learn-lite', 'git checkout -b ghp-branch', 'pip install scikit-learn==1.5.2', 'docker login registry.example.com',
  'docker login -u ci-bot --password-stdin registry.example.com', 'openssl rand -hex 32', 'echo PWD=$PWD OLDPWD=/tmp', 'curl -H "Authorization: Bearer $TOKEN" https://api.example.com',
  'curl -H "Authorization: Bearer ${API_TOKEN}" https://api.example.com', 'aws sts get-session-token --duration-seconds 900', 'vault kv get secret/app', 'git remote add origin git@github.com:acme/app.git',
  'psql postgres://localhost:5432/app', 'curl http://host:8080/a@b', 'redis-cli -h cache -p 6380 PING', 'sshpass -f ~/.pw ssh host', 'helm upgrade app ./chart --set image.tag=v1.2.3',
  'terraform plan -var-file=prod.tfvars', 'jq ".token" response.json', 'grep -rn "api_key" src/', 'rg -n "password" --type py', 'npx tsc --noEmit -p tsconfig.json',
];
COMMANDS.forEach((c) => addNegative('shell command', { command: c, description: 'run' }));
const LOGS = [
  'GET /api/v1/tokens 200 12ms', 'INFO auth: token refreshed for user_id=4821', 'WARN password policy: weak password rejected for user 17', 'Bearer authentication failed: token expired',
  'the bearer of bad news; basic authorization rules', 'session=abc123 expired at 2026-12-03T10:00:00Z', 'request_id=req_01HZY3K4M5N6P7Q8R9S0T1U2V3 status=200', 'trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=00f067aa0ba902b7',
  'Retry-After: 30', 'Content-Type: application/json; charset=utf-8', 'X-Request-Id: 9f1c2d3e-4b5a-6978-8a9b-0c1d2e3f4a5b', 'Set-Cookie: theme=dark; Path=/; SameSite=Lax',
  'keyboard layout: us', 'monkey patching detected in tests', 'token_count=1832 input_tokens=1500 output_tokens=332', '{"input_tokens": 1234, "max_tokens": 4096, "password_policy": "strong"}',
  '{"credentials": "same-origin"}', '{"token": "IDENTIFIER"}', '{"type": "api_key", "key": "name"}', '{"grant_type": "client_credentials", "scope": "read"}',
  'ERROR: password authentication failed for user "app"', 'fatal: Authentication failed for https://github.com/acme/app.git', 'npm ERR! code E401 Unable to authenticate', 'eyJ alone is not a token',
  'Downloading https://files.pythonhosted.org/packages/ab/cd/numpy-2.1.0.tar.gz', 'ok: [web-1] => (item=authorized_keys)', 'Verifying: sha512-' + 'Zm9v'.repeat(20), 'id_rsa.pub added to ~/.ssh/authorized_keys',
  'export default { secret: false, token: null }', 'Use {{ .Values.password }} in the template',
];
LOGS.forEach((l, i) => addNegative('log line', { file_path: `logs/${w(i)}.log`, content: l }));
for (let i = 0; i < 40; i++) {
  const forms = [
    { tool: 'Read', input: { file_path: `/srv/app/src/${w(i)}/${w(i + 3)}_service.ts`, offset: i * 10, limit: 200 } },
    { tool: 'Grep', input: { pattern: `${w(i)}Token|${w(i + 1)}Key`, path: 'src', glob: '**/*.ts' } },
    { tool: 'Glob', input: { pattern: `src/**/${w(i)}*.test.ts` } },
    { tool: 'WebFetch', input: { url: `https://docs.example.com/${w(i)}/authentication#api-keys`, prompt: 'How do I create an API key?' } },
  ];
  const f = forms[i % forms.length] as { tool: string; input: unknown };
  addNegative(`${f.tool} input`, f.input);
}

export const POSITIVES: readonly Positive[] = positives;
export const NEGATIVES: readonly Negative[] = negatives;

/** A tool_call envelope line holding the input text verbatim. */
export function envelope(id: string, input: string): string {
  return `{"schema":"toolcanon.event/v1","type":"tool_call","ts":"2026-12-06T10:00:00.000Z","harness":"claude_code","session_id":"corpus","call_id":"${id}","tool":"Bash","input":${input},"status":"ok","output":"ok"}`;
}

/**
 * Whether a secret survived in a stored text: any piece of it (5+ characters) found in the text
 * or in the text's JSON strings decoded, where the input held that piece only inside the secret.
 */
export function leaks(secret: string, input: string, stored: readonly string[]): string[] {
  const decodedInput = decodeAll(input);
  const outside = decodedInput.split(secret).join('\u0000');
  const watch = pieces(secret).filter((p) => !outside.includes(p));
  const found: string[] = [];
  for (const stored1 of stored) {
    // A marker names its kind (github_token) and is not the secret: read without them.
    const s = stored1.replace(/\[REDACTED:[a-z0-9_]+:[0-9a-f]{4}\]/g, '#');
    const texts = [s, decodeAll(s)];
    for (const p of watch) if (texts.some((t) => t.includes(p))) found.push(p);
  }
  return [...new Set(found)];
}

/** Every string of JSON text decoded and joined (JSON text that is not JSON is returned as it is). */
function decodeAll(text: string): string {
  try {
    const out: string[] = [];
    const walk = (v: unknown): void => {
      if (typeof v === 'string') out.push(v);
      else if (Array.isArray(v)) v.forEach(walk);
      else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) { out.push(k); walk(x); }
    };
    walk(JSON.parse(text));
    return out.join('\n');
  } catch {
    return text;
  }
}

export interface CorpusResult {
  readonly positives: number;
  readonly caught: number;
  readonly missed: readonly { id: string; rule: string; leaked: string[] }[];
  readonly negatives: number;
  readonly falsePositives: readonly { id: string; what: string; stored: string }[];
}

/** The decoded row's stored texts (every string column). */
function storedTexts(row: Record<string, unknown>): string[] {
  return Object.values(row).flatMap((v) => (typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []));
}

/**
 * Runs the corpus through a decoder (the real one in the bench and the test): a positive is
 * caught when no piece of its secret is in any stored column; a negative is a false positive
 * when anything was redacted or raw_input differs from the input.
 */
export function evaluateCorpus(decode: (line: string) => { kind: string; row?: Record<string, unknown> }): CorpusResult {
  const missed: { id: string; rule: string; leaked: string[] }[] = [];
  for (const p of POSITIVES) {
    const o = decode(envelope(p.id, p.input));
    if (o.kind !== 'row' || o.row === undefined) {
      missed.push({ id: p.id, rule: p.rule, leaked: [`not a row: ${o.kind}`] });
      continue;
    }
    const leaked = leaks(p.secret, p.input, storedTexts(o.row));
    if (leaked.length > 0) missed.push({ id: p.id, rule: p.rule, leaked });
  }
  const falsePositives: { id: string; what: string; stored: string }[] = [];
  for (const n of NEGATIVES) {
    const o = decode(envelope(n.id, n.input));
    const raw = o.row?.['raw_input'];
    if (o.kind !== 'row' || raw !== n.input || o.row?.['redactions'] !== 0) falsePositives.push({ id: n.id, what: n.what, stored: String(raw) });
  }
  return { positives: POSITIVES.length, caught: POSITIVES.length - missed.length, missed, negatives: NEGATIVES.length, falsePositives };
}
