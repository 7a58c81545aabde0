// The secret shapes toolcanon redacts before anything is written: one row per rule, with the
// public rule it follows (gitleaks' config/gitleaks.toml ids, secretlint's rule packages).
//
// Every pattern runs on JSON text as well as on plain text, so none of them consumes a `"` or a
// `\` (a replacement never breaks a JSON string or an escape), except the private-key block,
// which consumes whole escape pairs (`\n`). Vendor shapes are case-sensitive; the name-based
// rules (headers, assignments, flags, fields) are not. What a rule captures as `s` is the secret;
// the text before it (a header name, `KEY=`) is kept.

export interface RedactionRule {
  /** The kind written into the marker: [REDACTED:<kind>:<hash>]. */
  readonly kind: string;
  readonly description: string;
  /** The public rule(s) this one follows. */
  readonly after: string;
  /** Regular expression source; a named group `s` marks the secret (else the whole match). */
  readonly pattern: string;
  /** Rules whose names decide: the named group `n` must name a secret (see isSecretName). */
  readonly named?: true;
  readonly caseInsensitive?: true;
  /** A literal every match contains besides the name: a text without it skips the rule. */
  readonly anchor?: RegExp;
  /** Matches may be code (`token = socket.assigns.token`, `token = Token.sign(`): those are kept. */
  readonly codeAware?: true;
}

/** Not preceded by a character that would make the match the tail of a longer token. */
const START = String.raw`(?<![A-Za-z0-9_\-])`;
/** Not followed by a token character (the key ended here). */
const END = String.raw`(?![A-Za-z0-9_\-])`;
/** A value of an assignment, flag or field: up to a quote, an escape, white space or a shell operator. */
const VALUE = String.raw`[^\s"'\\&|;<>()\x60]{3,512}`;
/**
 * Words one of which every name isSecretName accepts contains (case aside). Named rules assert
 * it of the name they matched, inside the expression (a lookbehind from the separator back over
 * the name's characters), so a name without one (`"file_path":`, `limit=`) is rejected by the
 * engine instead of being handed to isSecretName: a necessary condition, so what is redacted
 * is the same (held by a test against isSecretName).
 */
export const NAME_WORD = String.raw`(?:secret|token|passw|passphrase|credential|key)`;
/** An optional opening quote, as written in a shell or in JSON text inside a string (`\"`). */
const OPEN_QUOTE = String.raw`(?:\\?["'])?`;

export const REDACTION_RULES: readonly RedactionRule[] = [
  { kind: 'private_key', description: 'PEM private key blocks (RSA, EC, OPENSSH, PGP, encrypted), to the END line or the end of the string (greedy and linear: it never rescans from a later BEGIN)', after: 'gitleaks private-key; secretlint-rule-privatekey', pattern: String.raw`-----BEGIN[ A-Z0-9_\-]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[^"\\\-]|\\.|-(?!----END))*(?:-----END[ A-Z0-9_\-]{0,40}PRIVATE KEY(?: BLOCK)?-----)?` },
  { kind: 'anthropic_key', description: 'Anthropic API and admin keys (sk-ant-api03-…, sk-ant-admin01-…)', after: 'gitleaks anthropic-api-key, anthropic-admin-api-key; secretlint-rule-anthropic', pattern: String.raw`${START}sk-ant-[a-z]{3,8}[0-9]{2}-[A-Za-z0-9_\-]{20,300}` },
  { kind: 'openai_key', description: 'OpenAI API keys (sk-proj-…, sk-svcacct-…, sk-admin-…, legacy sk-… with T3BlbkFJ)', after: 'gitleaks openai-api-key; secretlint-rule-openai', pattern: String.raw`${START}sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,300}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|[A-Za-z0-9]{48})${END}` },
  { kind: 'xai_key', description: 'xAI API keys (xai-…)', after: 'gitleaks xai-api-key (as of 8.24)', pattern: String.raw`${START}xai-[A-Za-z0-9_]{60,120}${END}` },
  { kind: 'google_api_key', description: 'Google / GCP API keys (AIza…)', after: 'gitleaks gcp-api-key; secretlint-rule-gcp', pattern: String.raw`${START}AIza[0-9A-Za-z_\-]{35}${END}` },
  { kind: 'github_token', description: 'GitHub personal, OAuth, app, refresh and fine-grained tokens (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)', after: 'gitleaks github-pat, github-oauth, github-app-token, github-refresh-token, github-fine-grained-pat; secretlint-rule-github', pattern: String.raw`${START}(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})${END}` },
  { kind: 'gitlab_token', description: 'GitLab personal, deploy, trigger, runner, CI job, OAuth, feed and agent tokens (glpat-, gldt-, glptt-, glrt-, glcbt-, gloas-, glsoat-, glft-, glimt-, glagent-)', after: 'gitleaks gitlab-pat, gitlab-ptt, gitlab-deploy-token, gitlab-rrt, gitlab-cicd-job-token, gitlab-feed-token', pattern: String.raw`${START}gl(?:pat|dt|ptt|rt|cbt|oas|soat|ft|imt|agent|ffct)-[A-Za-z0-9_\-]{20,255}${END}` },
  { kind: 'aws_access_key', description: 'AWS access key ids (AKIA…, ASIA…, ABIA…, ACCA…, A3T…)', after: 'gitleaks aws-access-token; secretlint-rule-aws', pattern: String.raw`${START}(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?![A-Za-z0-9])` },
  { kind: 'slack_token', description: 'Slack bot, user, app, config and refresh tokens (xoxb-, xoxp-, xoxa-, xoxo-, xoxs-, xoxr-, xoxe-, xapp-)', after: 'gitleaks slack-bot-token, slack-user-token, slack-app-token, slack-config-access-token; secretlint-rule-slack', pattern: String.raw`${START}(?:xox[abposre](?:\.[a-z0-9]+)?-[A-Za-z0-9\-]{10,255}|xapp-[0-9]-[A-Z0-9]{6,}-[0-9]{6,}-[A-Za-z0-9]{20,})${END}` },
  { kind: 'slack_webhook', description: 'Slack incoming-webhook and workflow URLs (the path after hooks.slack.com)', after: 'gitleaks slack-webhook-url; secretlint-rule-slack', pattern: String.raw`hooks\.slack\.com/(?<s>(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,255})` },
  { kind: 'jwt', description: 'JSON Web Tokens (eyJ….eyJ….signature)', after: 'gitleaks jwt', pattern: String.raw`${START}eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{0,1024}=?=?` },
  { kind: 'auth_header', description: 'Authorization / Proxy-Authorization headers: the credential after Bearer, Basic, Token, Digest or Bot', after: 'gitleaks curl-auth-header, generic authorization; secretlint-rule-basicauth', pattern: String.raw`\b(?:proxy-)?authorization[ \t]*:[ \t]*(?:bearer|basic|token|digest|bot)[ \t]+(?<s>[A-Za-z0-9\-._~+/]+=*)`, caseInsensitive: true, anchor: /authorization/i },
  { kind: 'bearer_token', description: 'a Bearer credential outside a header line (16+ characters, with a digit)', after: 'gitleaks curl-auth-header', pattern: String.raw`\bbearer[ \t]+(?<s>(?=[A-Za-z\-._~+/]*[0-9])[A-Za-z0-9\-._~+/]{16,4096}=*)`, caseInsensitive: true, anchor: /bearer/i },
  { kind: 'url_password', description: 'the password of a URL with credentials (scheme://user:password@host)', after: 'gitleaks generic URL credentials; secretlint-rule-database-connection-string, secretlint-rule-basicauth', pattern: String.raw`\b[a-z][a-z0-9+.\-]{1,20}://[^\s:/@"\\]{1,256}:(?<s>[^\s@/"\\]{1,256})(?=@)`, caseInsensitive: true, anchor: /:\/\// },
  { kind: 'secret_assignment', description: 'NAME=value (env, .env, shell, ini) where the name says secret, token, password or key', after: 'gitleaks generic-api-key (keyword form)', pattern: String.raw`(?<![A-Za-z0-9_.\-])(?<n>[A-Za-z_][A-Za-z0-9_.\-]{0,80})[ \t]{0,4}=(?<=${NAME_WORD}[A-Za-z0-9_.\-]{0,80}[ \t]{0,4}=)[ \t]{0,4}${OPEN_QUOTE}(?<s>${VALUE})`, named: true, caseInsensitive: true, anchor: /=/, codeAware: true },
  { kind: 'secret_flag', description: '--name value / --name=value where the flag says secret, token, password or key', after: 'gitleaks generic-api-key (keyword form)', pattern: String.raw`(?<![A-Za-z0-9_\-])--?(?<n>[A-Za-z][A-Za-z0-9_\-]{1,60})(?:[ \t]{1,4}|=)(?<=${NAME_WORD}[A-Za-z0-9_\-]{0,60}(?:[ \t]{1,4}|=))${OPEN_QUOTE}(?<s>${VALUE})`, named: true, caseInsensitive: true, anchor: /-/ },
  { kind: 'secret_field', description: 'a JSON / YAML-flow field "name": "value" where the name says secret, token, password or key (string values only)', after: 'gitleaks generic-api-key (keyword form)', pattern: String.raw`(?<q>\\?["'])(?<n>[A-Za-z_][A-Za-z0-9_.\-]{0,80})\k<q>[ \t]{0,4}:(?<=${NAME_WORD}[A-Za-z0-9_.\-]{0,80}\\?["'][ \t]{0,4}:)[ \t]{0,4}\\?["'](?<s>[^"'\\]{3,512})`, named: true, caseInsensitive: true, anchor: /:/ },
];

/** The kind a named rule's match is marked with: its own, or aws_secret_key under an AWS secret's name. */
export function kindOfNamed(kind: string, name: string): string {
  return /aws.?secret/i.test(name) ? 'aws_secret_key' : kind;
}

/** Name parts that on their own say the value is a secret. */
const SECRET_WORD = /(?:secret|token|passw(?:or)?d|passphrase|credentials?|apikey|accesskey|secretkey|privatekey|authkey)$/;
/** The part before a final "key" that makes it a secret key (api_key, ACCESS_KEY, signing-key). */
const KEY_QUALIFIERS = new Set(['api', 'access', 'secret', 'private', 'auth', 'signing', 'encryption', 'master', 'client', 'service', 'account', 'license', 'deploy', 'app', 'admin', 'session', 'subscription', 'ssh', 'webhook']);

/**
 * True when an assignment's, flag's or field's name says its value is a secret: its last part
 * (split at _ - . and lower-to-upper case changes) ends in secret, token, password, passwd,
 * passphrase, credential(s), or is "key" after a qualifier (api, access, secret, private, …) or
 * in an upper-case environment name (OPENAI_API_KEY, STRIPE_KEY). So max_tokens, tokenizer,
 * --key-file, sort_key and PWD are not secrets; GITHUB_TOKEN, db_password, --api-key, clientSecret are.
 */
export function isSecretName(name: string): boolean {
  const parts = name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().split(/[_.\-]+/).filter((p) => p !== '');
  const last = parts[parts.length - 1];
  if (last === undefined) return false;
  if (SECRET_WORD.test(last)) return true;
  if (last !== 'key' && last !== 'keys') return false;
  const before = parts[parts.length - 2];
  if (before === undefined) return false;
  return KEY_QUALIFIERS.has(before) || (/^[A-Z0-9_]+$/.test(name) && parts.length >= 2);
}

/** An assignment's value that is code, a path of identifiers (`token = socket.assigns.token`). */
export function isIdentifierPath(value: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(value);
}

/** Keywords that start an expression in code (`let name_token = match call.prefix() {`). */
const CODE_WORDS = new Set(['match', 'if', 'await', 'new', 'async', 'yield', 'not', 'typeof', 'lambda', 'function', 'fn', 'self', 'this', 'switch', 'case', 'try', 'when', 'do']);

/** Values that are not secrets even under a secret's name: references, placeholders, booleans, numbers. */
export function isPlaceholderValue(value: string): boolean {
  const c = value.charCodeAt(0);
  if (c === 36 /* $ */ || c === 37 /* % */ || c === 123 /* { */ || c === 91 /* [ */) return true; // $VAR, %VAR%, {{x}}, [REDACTED:…]
  if (/^[0-9]+$/.test(value)) return true; // max_tokens=4096
  return /^(?:true|false|null|none|nil|yes|no|undefined|required|optional|string|redacted|\*+|x+)$/i.test(value) || CODE_WORDS.has(value);
}
