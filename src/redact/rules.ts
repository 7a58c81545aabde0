// The secret shapes toolcanon redacts before anything is written, and the judgement of a value
// found under a secret's name. Every rule runs on DECODED text (a JSON string's value after its
// escapes are read, see redact.ts), never on JSON text, so `\u0067hp_…` and `https:\/\/u:p@h`
// are the same secrets as `ghp_…` and `https://u:p@h`.
//
// Vendor shapes follow gitleaks' default configuration (github.com/gitleaks/gitleaks,
// config/gitleaks.toml at commit b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b, 2026-07-22): every
// rule there whose secret has a fixed prefix or infix is here, under the provider's name (its
// gitleaks id in `after`), for the providers a developer's logs name. gitleaks' rules that need a
// keyword next to an unprefixed value (`adafruit … = <32 chars>`) are covered by the named rules
// below when the name says key, token, secret or password; docs/security.md lists the rest.
//
// A rule's match marks the secret with the named group `s` (or `s2`, `s3`, `s4`: alternatives of
// a quoted and an unquoted value), else the whole match. Shapes are case-sensitive and start at a
// boundary that is not a letter or digit (so `s-ghp_…` and `mcp__ghp_…__x` are found).

export interface RedactionRule {
  /** The kind written into the marker: [REDACTED:<kind>:<hash>]. */
  readonly kind: string;
  readonly description: string;
  /** The public rule(s) this one follows. */
  readonly after: string;
  /** Regular expression source. */
  readonly pattern: string;
  /**
   * Literals one of which every match contains (case-sensitive for shapes): a text holding none
   * of them skips the rule. The prefilter of a pass is the alternation of its rules' literals.
   */
  readonly literals: readonly string[];
  /** Name-based: the named group `n` is a name, and judgeNamed decides whether its value is a secret. */
  readonly named?: true;
  readonly caseInsensitive?: true;
}

/** Not preceded by a letter or digit: a token glued after `-` or `_` is still found. */
const S = String.raw`(?<![A-Za-z0-9])`;
/** Not followed by a letter or digit (the token ended here). */
const E = String.raw`(?![A-Za-z0-9])`;

type Shape = readonly [kind: string, after: string, literals: readonly string[], pattern: string, description?: string];

/** Vendor shapes: [kind, gitleaks ids, literals, pattern]. */
const SHAPES: readonly Shape[] = [
  ['private_key', 'private-key', ['PRIVATE KEY'], String.raw`-----BEGIN[ A-Z0-9_\-]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[ A-Z0-9_\-]{0,40}PRIVATE KEY(?: BLOCK)?-----|$)`, 'PEM private key blocks (RSA, EC, DSA, OPENSSH, PGP, encrypted), to the END line or the end of the value'],
  ['age_secret_key', 'age-secret-key', ['AGE-SECRET-KEY-1'], String.raw`AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}`],
  ['anthropic_key', 'anthropic-api-key, anthropic-admin-api-key', ['sk-ant-'], String.raw`${S}sk-ant-[a-z]{3,8}[0-9]{2}-[A-Za-z0-9_\-]{20,300}`],
  ['openai_key', 'openai-api-key', ['sk-', 'T3BlbkFJ'], String.raw`${S}sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,300}|[A-Za-z0-9_\-]{10,80}T3BlbkFJ[A-Za-z0-9_\-]{10,80}|[A-Za-z0-9]{32,64}${E})`, 'OpenAI (sk-proj-, sk-svcacct-, sk-admin-, T3BlbkFJ) and other sk- keys of 32-64 characters (DeepSeek, Moonshot)'],
  ['xai_key', 'xai-api-key', ['xai-'], String.raw`${S}xai-[A-Za-z0-9_]{60,120}${E}`],
  ['groq_key', 'groq (secretlint)', ['gsk_'], String.raw`${S}gsk_[A-Za-z0-9]{48,56}${E}`],
  ['perplexity_key', 'perplexity-api-key', ['pplx-'], String.raw`${S}pplx-[A-Za-z0-9]{48}${E}`],
  ['replicate_token', 'replicate (trufflehog)', ['r8_'], String.raw`${S}r8_[A-Za-z0-9]{37}${E}`],
  ['huggingface_token', 'huggingface-access-token, huggingface-organization-api-token', ['hf_', 'api_org_'], String.raw`${S}(?:hf_|api_org_)[A-Za-z0-9]{30,40}${E}`],
  ['google_api_key', 'gcp-api-key', ['AIza'], String.raw`${S}AIza[0-9A-Za-z_\-]{35}${E}`],
  ['google_oauth', 'gcp oauth (trufflehog)', ['ya29.', 'GOCSPX-'], String.raw`${S}(?:ya29\.[0-9A-Za-z_\-]{30,2048}|GOCSPX-[A-Za-z0-9_\-]{28})${E}`, 'Google OAuth access tokens (ya29.) and client secrets (GOCSPX-)'],
  ['github_token', 'github-pat, github-oauth, github-app-token, github-refresh-token, github-fine-grained-pat', ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_'], String.raw`${S}(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})${E}`],
  ['gitlab_token', 'gitlab-pat, gitlab-pat-routable, gitlab-ptt, gitlab-deploy-token, gitlab-rrt, gitlab-runner-authentication-token, gitlab-cicd-job-token, gitlab-feed-token, gitlab-incoming-mail-token, gitlab-kubernetes-agent-token, gitlab-oauth-app-secret, gitlab-scim-token, gitlab-feature-flag-client-token', ['glpat-', 'gldt-', 'glptt-', 'glrt-', 'glcbt-', 'gloas-', 'glsoat-', 'glft-', 'glimt-', 'glagent-', 'glffct-', 'GR1348941'], String.raw`${S}(?:gl(?:pat|dt|ptt|rt|cbt|oas|soat|ft|imt|agent|ffct)-[A-Za-z0-9_\-.]{20,300}|GR1348941[A-Za-z0-9_\-]{20,64})${E}`],
  ['gitlab_session', 'gitlab-session-cookie', ['gitlab_session='], String.raw`_gitlab_session=(?<s>[0-9a-z]{32})`],
  ['bitbucket_token', 'atlassian-api-token', ['ATATT3', 'ATBB', 'ATCTT3'], String.raw`${S}(?:ATATT3|ATCTT3|ATBB)[A-Za-z0-9_\-=]{24,300}${E}`, 'Atlassian / Bitbucket API and app tokens (ATATT3, ATCTT3, ATBB)'],
  ['npm_token', 'npm-access-token', ['npm_'], String.raw`${S}npm_[A-Za-z0-9]{36}${E}`],
  ['pypi_token', 'pypi-upload-token', ['pypi-AgE'], String.raw`${S}pypi-AgE[A-Za-z0-9_\-]{50,1000}`],
  ['rubygems_token', 'rubygems-api-token', ['rubygems_'], String.raw`${S}rubygems_[a-f0-9]{48}${E}`],
  ['clojars_token', 'clojars-api-token', ['CLOJARS_'], String.raw`CLOJARS_[A-Za-z0-9]{60}`],
  ['docker_token', 'docker hub personal access token (trufflehog)', ['dckr_pat_', 'dckr_oat_'], String.raw`${S}dckr_(?:pat|oat)_[A-Za-z0-9_\-]{24,64}${E}`],
  ['artifactory_token', 'artifactory-api-key, artifactory-reference-token, jfrog-identity-token', ['AKCp', 'cmVmd'], String.raw`${S}(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})${E}`],
  ['aws_access_key', 'aws-access-token', ['A3T', 'AKIA', 'ASIA', 'ABIA', 'ACCA'], String.raw`${S}(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}${E}`],
  ['aws_bedrock_key', 'aws-amazon-bedrock-api-key-long-lived, aws-amazon-bedrock-api-key-short-lived', ['ABSK', 'bedrock-api-key-'], String.raw`${S}(?:ABSK[A-Za-z0-9+/]{109,269}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%&\-]{0,2000})`],
  ['azure_client_secret', 'azure-ad-client-secret', ['Q~'], String.raw`${S}[a-zA-Z0-9_~.]{3}[0-9]Q~[a-zA-Z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])`],
  ['azure_sas', 'azure storage SAS signature (trufflehog)', ['sig='], String.raw`[?&]sig=(?<s>[A-Za-z0-9%+/=]{30,200})`, 'the signature of an Azure shared-access-signature URL (sig=)'],
  ['azure_account_key', 'azure storage account key (trufflehog)', ['AccountKey='], String.raw`AccountKey=(?<s>[A-Za-z0-9+/]{60,100}={0,2})`],
  ['alibaba_access_key', 'alibaba-access-key-id', ['LTAI'], String.raw`${S}LTAI[A-Za-z0-9]{20}${E}`],
  ['digitalocean_token', 'digitalocean-access-token, digitalocean-pat, digitalocean-refresh-token', ['doo_v1_', 'dop_v1_', 'dor_v1_'], String.raw`${S}do[opr]_v1_[a-f0-9]{64}${E}`],
  ['cloudflare_origin_ca', 'cloudflare-origin-ca-key', ['v1.0-'], String.raw`${S}v1\.0-[a-f0-9]{24}-[a-f0-9]{146}${E}`],
  ['heroku_key', 'heroku-api-key-v2', ['HRKU-'], String.raw`${S}HRKU-(?:AA)?[0-9a-zA-Z_\-]{58,64}${E}`],
  ['flyio_token', 'flyio-access-token', ['fo1_', 'fm1a_', 'fm1r_', 'fm2_', 'FlyV1 '], String.raw`${S}(?:fo1_[\w\-]{43}|fm1[ar]_[a-zA-Z0-9+/]{100,}={0,3}|fm2_[a-zA-Z0-9+/]{100,}={0,3}|FlyV1 fm[12][ar]?_[a-zA-Z0-9+/,=_\-]{100,})`],
  ['vercel_token', 'vercel (secretlint)', ['vcp_', 'vci_', 'vca_', 'vcr_', 'vck_'], String.raw`${S}vc[pciark]_[A-Za-z0-9]{56}${E}`],
  ['netlify_token', 'netlify-access-token', ['nfp_'], String.raw`${S}nfp_[A-Za-z0-9]{36,40}${E}`],
  ['render_token', 'render (trufflehog)', ['rnd_'], String.raw`${S}rnd_[A-Za-z0-9]{32}${E}`],
  ['supabase_token', 'supabase (secretlint)', ['sbp_', 'sb_secret_'], String.raw`${S}(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_\-]{30,64})${E}`],
  ['planetscale_token', 'planetscale-api-token, planetscale-oauth-token, planetscale-password', ['pscale_'], String.raw`${S}pscale_(?:tkn|oauth|pw)_[\w=.\-]{32,64}${E}`],
  ['databricks_token', 'databricks-api-token', ['dapi'], String.raw`${S}dapi[a-f0-9]{32}(?:-[0-9])?${E}`],
  ['clickhouse_cloud_key', 'clickhouse-cloud-api-secret-key', ['4b1d'], String.raw`${S}4b1d[A-Za-z0-9]{38}${E}`],
  ['hashicorp_token', 'hashicorp-tf-api-token, vault-service-token, vault-batch-token', ['atlasv1.', 'hvs.', 'hvb.', 'hvr.'], String.raw`${S}(?:[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9\-_=]{60,70}|hv[sbr]\.[\w\-]{24,300})${E}`],
  ['doppler_token', 'doppler-api-token', ['dp.pt.', 'dp.st.', 'dp.sa.', 'dp.ct.', 'dp.scim.', 'dp.audit.'], String.raw`${S}dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9_.\-]{40,100}${E}`],
  ['pulumi_token', 'pulumi-api-token', ['pul-'], String.raw`${S}pul-[a-f0-9]{40}${E}`],
  ['prefect_token', 'prefect-api-token', ['pnu_'], String.raw`${S}pnu_[A-Za-z0-9]{36}${E}`],
  ['infracost_token', 'infracost-api-token', ['ico-'], String.raw`${S}ico-[A-Za-z0-9]{32}${E}`],
  ['octopus_key', 'octopus-deploy-api-key', ['API-'], String.raw`${S}API-[A-Z0-9]{26}${E}`],
  ['openshift_token', 'openshift-user-token', ['sha256~'], String.raw`${S}sha256~[\w\-]{43}${E}`],
  ['buildkite_token', 'buildkite (trufflehog)', ['bkua_'], String.raw`${S}bkua_[a-f0-9]{40}${E}`],
  ['circleci_token', 'circleci (trufflehog)', ['CCIPAT_', 'CCIPRJ_'], String.raw`${S}CCIP(?:AT|RJ)_[A-Za-z0-9]{22}_[a-f0-9]{40}${E}`],
  ['sentry_token', 'sentry-org-token, sentry-user-token', ['sntrys_', 'sntryu_'], String.raw`${S}(?:sntrys_eyJ[A-Za-z0-9+/=_]{60,400}|sntryu_[a-f0-9]{64})${E}`],
  ['grafana_token', 'grafana-api-key, grafana-cloud-api-token, grafana-service-account-token', ['eyJrIjoi', 'glc_', 'glsa_'], String.raw`${S}(?:eyJrIjoi[A-Za-z0-9]{70,400}={0,3}|glc_[A-Za-z0-9+/]{32,400}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})`],
  ['newrelic_key', 'new-relic-user-api-key, new-relic-browser-api-token, new-relic-insert-key', ['NRAK-', 'NRJS-', 'NRII-'], String.raw`${S}(?:NRAK-[A-Z0-9]{27}|NRJS-[a-f0-9]{19}|NRII-[A-Za-z0-9\-_]{32})${E}`],
  ['dynatrace_token', 'dynatrace-api-token', ['dt0c01.'], String.raw`${S}dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}${E}`],
  ['postman_key', 'postman-api-token', ['PMAK-'], String.raw`${S}PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}${E}`],
  ['linear_key', 'linear-api-key', ['lin_api_', 'lin_oauth_'], String.raw`${S}lin_(?:api|oauth)_[A-Za-z0-9]{40,64}${E}`],
  ['notion_token', 'notion-api-token', ['ntn_', 'secret_'], String.raw`${S}(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})${E}`],
  ['figma_token', 'figma (trufflehog)', ['figd_'], String.raw`${S}figd_[A-Za-z0-9_\-]{40,64}${E}`],
  ['stripe_key', 'stripe-access-token', ['sk_live_', 'sk_test_', 'sk_prod_', 'rk_live_', 'rk_test_', 'rk_prod_', 'whsec_'], String.raw`${S}(?:[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,247}|whsec_[A-Za-z0-9+/=]{24,64})${E}`, 'Stripe secret and restricted keys (sk_live_, rk_live_, test and prod) and webhook signing secrets (whsec_)'],
  ['square_token', 'square-access-token', ['EAAA', 'sq0atp-', 'sq0csp-'], String.raw`${S}(?:EAAA|sq0atp-|sq0csp-)[\w\-]{22,60}${E}`],
  ['shopify_token', 'shopify-access-token, shopify-custom-access-token, shopify-private-app-access-token, shopify-shared-secret', ['shpat_', 'shpca_', 'shppa_', 'shpss_'], String.raw`${S}shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}${E}`],
  ['shippo_token', 'shippo-api-token', ['shippo_'], String.raw`${S}shippo_(?:live|test)_[a-fA-F0-9]{40}${E}`],
  ['easypost_token', 'easypost-api-token, easypost-test-api-token', ['EZAK', 'EZTK'], String.raw`${S}EZ[AT]K[A-Za-z0-9]{54}${E}`],
  ['duffel_token', 'duffel-api-token', ['duffel_'], String.raw`${S}duffel_(?:test|live)_[A-Za-z0-9_\-=]{43}`],
  ['flutterwave_key', 'flutterwave-secret-key, flutterwave-encryption-key', ['FLWSECK'], String.raw`FLWSECK(?:_TEST)?-[a-hA-H0-9]{12,32}(?:-X)?`],
  ['plaid_token', 'plaid-api-token', ['access-sandbox-', 'access-development-', 'access-production-'], String.raw`${S}access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}${E}`],
  ['sendgrid_key', 'sendgrid-api-token', ['SG.'], String.raw`${S}SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}${E}`],
  ['sendinblue_key', 'sendinblue-api-token', ['xkeysib-', 'xsmtpsib-'], String.raw`${S}x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}${E}`],
  ['mailgun_key', 'mailgun-private-api-token', ['key-'], String.raw`${S}key-[a-f0-9]{32}${E}`],
  ['mailchimp_key', 'mailchimp-api-key', ['-us'], String.raw`${S}[0-9a-f]{32}-us[0-9]{1,2}${E}`],
  ['twilio_key', 'twilio-api-key', ['SK'], String.raw`${S}SK[0-9a-f]{32}${E}`],
  ['slack_token', 'slack-bot-token, slack-user-token, slack-app-token, slack-config-access-token, slack-config-refresh-token, slack-legacy-*', ['xox', 'xapp-'], String.raw`${S}(?:xox[abposre](?:\.xox[bp])?(?:\.[a-z0-9]+)?-[A-Za-z0-9\-]{10,255}|xapp-[0-9]-[A-Za-z0-9]{6,}-[0-9]{6,}-[A-Za-z0-9]{20,})${E}`],
  ['slack_webhook', 'slack-webhook-url', ['hooks.slack.com'], String.raw`hooks\.slack\.com/(?<s>(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,255})`],
  ['discord_webhook', 'discord webhook (trufflehog)', ['api/webhooks/'], String.raw`discord(?:app)?\.com/api/webhooks/(?<s>[0-9]{15,25}/[A-Za-z0-9_\-]{60,80})`],
  ['teams_webhook', 'microsoft-teams-webhook', ['webhook.office.com'], String.raw`\.webhook\.office\.com/(?<s>webhookb2/[A-Za-z0-9@\-/]{60,300})`],
  ['telegram_token', 'telegram-bot-api-token', [':AA'], String.raw`${S}[0-9]{8,10}:AA[0-9A-Za-z_\-]{33}${E}`],
  ['jwt', 'jwt', ['eyJ'], String.raw`${S}eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{0,1024}=?=?`],
  ['onepassword_token', '1password-secret-key, 1password-service-account-token', ['ops_eyJ', 'A3-'], String.raw`${S}(?:ops_eyJ[a-zA-Z0-9+/]{250,}={0,3}|A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})${E}`],
];

/** A quoted value (to its closing quote) or an unquoted one (to white space or a quote). */
// An unquoted value is matched up to UNQUOTED_VALUE_CAP characters (the rest of its token is
// added once the value is judged a secret: src/redact/redact.ts): matched whole, a text of many
// `key=key=…` made every rejected candidate scan to the token's end (quadratic; the fuzz suite's
// hang of 2026-12-06, a 300 KB string).
export const UNQUOTED_VALUE_CAP = 256;
const VALUE = String.raw`(?:'(?<s>[^'\r\n]*)'|"(?<s2>[^"\r\n]*)"|\x60(?<s4>[^\x60\r\n]*)\x60|(?<s3>[^\s'"\x60]{1,256}))`;
/**
 * Words one of which every name isSecretName accepts contains (case aside): named rules assert
 * it of their name inside the expression (a lookbehind), so a name without one is rejected by
 * the engine before isSecretName runs (held by a test against isSecretName).
 */
export const NAME_WORD = String.raw`(?:secret|token|pass|pwd|pw|credential|key|auth)`;
const NAME = String.raw`[A-Za-z_][A-Za-z0-9_.\-]{0,80}`;

/** Name-based and command-line rules: [kind, after, literals, pattern, named, caseInsensitive, description]. */
const NAMED: readonly RedactionRule[] = [
  { kind: 'auth_header', description: 'Authorization / Proxy-Authorization headers: the credential after the scheme (Bearer, Basic, Token, Digest, Bot, …), or the whole value when there is no scheme', after: 'gitleaks curl-auth-header; secretlint-rule-basicauth', literals: ['authorization'], caseInsensitive: true, pattern: String.raw`\b(?:proxy-)?authorization['"]?[ \t]*[:=][ \t]*['"]?(?:(?:bearer|basic|token|digest|bot|negotiate|ntlm|api-?key|sso-key|hmac|aws4-hmac-sha256)[ \t]+)?(?<s>[^\s'",]+)` },
  { kind: 'bearer_token', description: 'a Bearer credential outside a header line (12+ characters that are not a word or an identifier)', after: 'gitleaks curl-auth-header', literals: ['bearer'], caseInsensitive: true, pattern: String.raw`\bbearer[ \t]+(?<s>[A-Za-z0-9\-._~+/]{12,4096}=*)` },
  { kind: 'url_password', description: 'the password of a URL with credentials (scheme://user:password@host, the user may be empty), to the last @ of the authority', after: 'gitleaks generic URL credentials, sidekiq-sensitive-url; secretlint-rule-database-connection-string', literals: ['://'], caseInsensitive: true, pattern: String.raw`\b[a-z][a-z0-9+.\-]{1,20}://[^\s:/@'"\x60]{0,256}:(?<s>[^\s/'"\x60?#]{1,256})@[^\s@/'"\x60?#]` },
  { kind: 'curl_user', description: 'curl -u / --user user:password (the password)', after: 'gitleaks curl-auth-user', literals: ['-u', '--user'], pattern: String.raw`\bcurl\b[^\r\n|;&]*?[ \t](?:-u[ \t]*|--user(?:=|[ \t]+))(?:'[^':\r\n]*:(?<s>[^'\r\n]+)'|"[^":\r\n]*:(?<s2>[^"\r\n]+)"|[^\s:'"]*:(?<s3>[^\s'"]+))` },
  { kind: 'cli_password', description: 'a password given on a command line: mysql/mariadb -pPASS, sshpass/mongo -p PASS, docker/podman/helm … login -p PASS, redis-cli -a PASS, openssl -pass pass:PASS', after: 'toolcanon (no gitleaks rule)', literals: ['-p', '-a'], pattern: String.raw`(?:\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)\b[^\r\n|;&]*?[ \t]-p(?=[^\s-])|\b(?:sshpass|mongo|mongosh|mongodump|mongorestore)\b[^\r\n|;&]*?[ \t]-p[ \t]*|\b(?:docker|podman|buildah|nerdctl|skopeo|oras|helm|crane)\b[^\r\n|;&]*?\blogin\b[^\r\n|;&]*?[ \t]-p[ \t]*|\bredis-cli\b[^\r\n|;&]*?[ \t]-a[ \t]+|[ \t]-pass(?:in|out)?[ \t]+pass:)` + VALUE },
  { kind: 'netrc_password', description: '.netrc: machine HOST login USER password PASS', after: 'toolcanon (no gitleaks rule)', literals: ['password'], caseInsensitive: true, pattern: String.raw`\bmachine[ \t]+\S+[ \t\r\n]+login[ \t]+\S+[ \t\r\n]+password[ \t]+(?<s3>\S+)` },
  { kind: 'secret_assignment', description: 'NAME=value, NAME := value, NAME => value (env, .env, shell, ini, code) where the name says password, secret, token or key; quoted values to the closing quote, unquoted ones to white space', after: 'gitleaks generic-api-key (keyword form)', literals: ['='], named: true, caseInsensitive: true, pattern: String.raw`(?<![A-Za-z0-9_\-$])(?<n>${NAME})['"\]]?[ \t]{0,4}(?:=>|:=|\+?=(?![=~]))(?<=${NAME_WORD}[A-Za-z0-9_.\-]{0,80}['"\]]?[ \t]{0,4}(?:=>|:=|\+?=))[ \t]{0,4}${VALUE}` },
  { kind: 'secret_field', description: 'a field "name": "value" (JSON, YAML, a header NAME: value) where the name says password, secret, token or key', after: 'gitleaks generic-api-key (keyword form)', literals: [':'], named: true, caseInsensitive: true, pattern: String.raw`(?<![A-Za-z0-9_\-$])(?:(?<q>['"])(?<n>${NAME})\k<q>(?<=${NAME_WORD}[A-Za-z0-9_.\-]{0,80}['"])[ \t]{0,4}:[ \t]{0,4}(?:'(?<s>[^'\r\n]*)'|"(?<s2>[^"\r\n]*)")|(?<n2>${NAME})[ \t]{0,4}:(?<=${NAME_WORD}[A-Za-z0-9_.\-]{0,80}[ \t]{0,4}:)[ \t]{1,4}${VALUE.replace(/\(\?<s>/, '(?<s5>').replace(/\(\?<s2>/, '(?<s6>').replace(/\(\?<s3>/, '(?<s7>').replace(/\(\?<s4>/, '(?<s8>')})` },
  { kind: 'secret_flag', description: '--name value / --name=value where the flag says password, secret, token or key', after: 'gitleaks generic-api-key (keyword form)', literals: ['-'], named: true, caseInsensitive: true, pattern: String.raw`(?<![A-Za-z0-9_\-])--?(?<n>[A-Za-z][A-Za-z0-9_\-]{1,60})(?:=|[ \t]{1,4})(?<=${NAME_WORD}[A-Za-z0-9_\-]{0,60}(?:=|[ \t]{1,4}))${VALUE}` },
];

/** The kinds of the rules that read a context (a name, a header, a command), run after the shapes. */
export const CONTEXT_KINDS: ReadonlySet<string> = new Set(NAMED.map((r) => r.kind));

export const REDACTION_RULES: readonly RedactionRule[] = [
  ...SHAPES.map(([kind, after, literals, pattern, description]): RedactionRule => ({ kind, after: `gitleaks ${after}`, literals, pattern, description: description ?? `${kind.replace(/_/g, ' ')} (${literals.join(', ')})` })),
  ...NAMED,
];

/** The kind a named rule's match is marked with: its own, or aws_secret_key under an AWS secret's name. */
export function kindOfNamed(kind: string, name: string): string {
  return /aws.?secret/i.test(name) ? 'aws_secret_key' : kind;
}

/** How strongly a name says its value is a secret: 0 not, 1 maybe (the value must look like one), 2 yes. */
export type Strength = 0 | 1 | 2;

/** Last name parts that make any value a secret. */
const STRONG = /^(?:password|passwd|passphrase|passcode|pass|pwd|pw|secret|secrets|clientsecret|dbpassword)$|^(?!(?:by|com|sur|over|under|tres|im|mis|out)pass$)[a-z]*pass(?:word|wd)?$/;
/** Last name parts that make a value a secret when it looks like one. */
const WEAK = /^(?:tokens?|credentials?|authkey|auth|authtoken|accesstoken|apitoken|[a-z]*token)$/;
/** Glued key names that are as strong as a password. */
const STRONG_KEY = /^(?:apikey|accesskey|secretkey|privatekey|masterkey|signingkey|encryptionkey)$/;
/** The part before a final "key" that makes the key as strong as a password (API_KEY, signing-key). */
const STRONG_QUALIFIERS = new Set(['api', 'access', 'secret', 'private', 'auth', 'signing', 'encryption', 'master', 'client', 'account', 'license', 'deploy', 'webhook', 'ssh', 'consumer', 'shared', 'storage', 'admin', 'service', 'app', 'bot']);
/** What a count of tokens is called (max_tokens, input_tokens): a number, never a secret. */
const COUNT_QUALIFIERS = new Set(['max', 'min', 'num', 'total', 'input', 'output', 'prompt', 'completion', 'context', 'reasoning', 'cache', 'cached', 'remaining', 'used', 'thinking', 'budget']);
/** The part before a final "key" that makes it a secret key (api_key, ACCESS_KEY, signing-key). */
const KEY_QUALIFIERS = new Set(['api', 'access', 'secret', 'private', 'auth', 'signing', 'encryption', 'master', 'client', 'service', 'account', 'license', 'deploy', 'app', 'admin', 'session', 'subscription', 'ssh', 'webhook', 'x', 'consumer', 'shared', 'storage', 'write', 'read', 'ingest', 'sdk', 'project', 'user', 'bot', 'cloud']);
/** Trailing parts that do not change what the name holds (SECRET_KEY_BASE, API_KEY_VALUE). */
const NEUTRAL_TAIL = new Set(['base', 'value', 'b64', 'base64', 'hex', 'raw', 'str', 'string', 'plain', 'plaintext', 'env']);
/** Whole names that hold no secret though a word says so (PWD is the shell's directory). */
const NOT_SECRET_NAMES = new Set(['pwd', 'oldpwd', 'pw', 'key', 'keys', 'auth', 'pass']);

const strengthMemo = new Map<string, Strength>();

/**
 * How strongly an assignment's, flag's or field's name says its value is a secret, from its last
 * part (split at _ - . and lower-to-upper case changes, a neutral tail such as _BASE dropped):
 * password, passwd, pass (PGPASS), pwd after a qualifier (MYSQL_PWD), secret: 2; token(s),
 * credential(s), apikey, auth, "key" after a qualifier or in an upper-case environment name
 * (OPENAI_API_KEY, SORT_KEY): 1. max_tokens, tokenizer, --key-file, PWD, OLDPWD are 1 or 0 and
 * their values (numbers, paths, identifiers) are not secrets.
 */
export function secretStrength(name: string): Strength {
  const known = strengthMemo.get(name);
  if (known !== undefined) return known;
  const s = computeStrength(name);
  if (strengthMemo.size > 4096) strengthMemo.clear();
  strengthMemo.set(name, s);
  return s;
}

function computeStrength(name: string): Strength {
  const parts = name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().split(/[_.\-]+/).filter((p) => p !== '');
  while (parts.length > 1 && NEUTRAL_TAIL.has(parts[parts.length - 1] as string)) parts.pop();
  const last = parts[parts.length - 1];
  if (last === undefined) return 0;
  if (parts.length === 1 && NOT_SECRET_NAMES.has(last)) return 0;
  const before = parts[parts.length - 2];
  if ((last === 'pwd' || last === 'pw') && before === 'old') return 0;
  if (STRONG.test(last) || STRONG_KEY.test(last)) return 2;
  if (last === 'tokens' && before !== undefined && COUNT_QUALIFIERS.has(before)) return 0;
  if (WEAK.test(last)) return 1;
  if (last !== 'key' && last !== 'keys') return 0;
  if (before === undefined) return 0;
  if (STRONG_QUALIFIERS.has(before)) return 2;
  return KEY_QUALIFIERS.has(before) || (/^[A-Z0-9_]+$/.test(name) && parts.length >= 2) ? 1 : 0;
}

/** True when a name says its value is (or may be) a secret. */
export function isSecretName(name: string): boolean {
  return secretStrength(name) > 0;
}

/** References to a secret kept elsewhere, not the secret: $X, ${X}, %X%, {{ x }}, <token>, os.environ[…], process.env.X, getenv(…). */
const REFERENCE = /^(?:\$|%[A-Za-z_]|\{\{|<[A-Za-z_ \-]+>$|\[REDACTED:|\*{3,}|(?:os\.)?environ\b|os\.getenv|(?:System\.)?getenv|process\.env|import\.meta\.env|env\(|ENV\[|ENV\.fetch|Deno\.env|std::env|env::var|secrets\.|vault:|op:\/\/|sm:\/\/|awssm:|arn:aws:secretsmanager|keyring|\.\/|\/dev\/|~\/)/;
/** Values that say nothing: booleans, empty markers, type names, placeholders. */
const NOTHING = /^(?:true|false|null|none|nil|yes|no|on|off|undefined|required|optional|string|str|number|int|bool|boolean|any|unknown|bytes|object|redacted|hidden|masked|secret|password|token|changeme_?later|x+|\*+|\.{3}|…|-+|_+|0+)$/i;
/** Keywords that start an expression in code (`let name_token = match call.prefix() {`). */
const CODE_WORDS = new Set(['match', 'if', 'await', 'new', 'async', 'yield', 'not', 'typeof', 'lambda', 'function', 'fn', 'self', 'this', 'switch', 'case', 'try', 'when', 'do', 'return', 'ref', 'mut']);

/** A value under a secret's name that is a reference, a placeholder or nothing (kept). */
export function isPlaceholderValue(value: string): boolean {
  return value === '' || REFERENCE.test(value) || NOTHING.test(value) || CODE_WORDS.has(value);
}

/** A path of identifiers (`socket.assigns.token`, `config.api_key`): code, not a value. */
export function isIdentifierPath(value: string): boolean {
  return /^[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::|->)[A-Za-z_$][A-Za-z0-9_$]*)+$/.test(value);
}

/**
 * A word, an identifier, a number or a path of them: created_at, same-origin, IDENTIFIER,
 * uploads/2026/avatar.png, myTokenName. Each part (between _ - . / : @ + = and spaces) is a word
 * in one case, a Capitalized or camelCase word, a number, or at most 3 characters; a run of 20
 * lower-case letters or more is not a word.
 */
export function isWordy(value: string): boolean {
  for (const part of value.split(/[_\-./:@+=,\s]+/)) {
    if (part.length <= 3) continue;
    if (/^[0-9]+$/.test(part)) continue;
    if (part.length >= 20) return false;
    if (/^(?:[a-z]+|[A-Z]+|[A-Z]?[a-z]+(?:[A-Z][a-z]+)*|[A-Z][a-z]+(?:[A-Z][a-z]+)*)$/.test(part)) continue;
    return false;
  }
  return true;
}

/** A value shaped like a credential: 8+ characters, no white space, not wordy. */
export function looksLikeCredential(value: string): boolean {
  return value.length >= 8 && !/\s/.test(value) && !isWordy(value);
}

/** What surrounds a value a named rule or a JSON field found. */
export interface ValueContext {
  /** The value was quoted (a string, not code). */
  readonly quoted: boolean;
  /** An assignment with spaces around its operator (`token = x`: code style). */
  readonly spaced?: boolean;
  /** The character after an unquoted value (`(`, `[`, `.`: code). */
  readonly next?: number;
  /** The value may be code (an assignment, a YAML-like field), not a command line's argument. */
  readonly code?: boolean;
  /** A bare `name: value` (YAML, a header, or a typed parameter in code). */
  readonly colon?: boolean;
}

/**
 * Whether the value found under a name is a secret: never a reference, a placeholder or code (an
 * unquoted identifier path, a call, an identifier in a spaced assignment); under a strong name
 * anything else of 2+ characters; under a weak name only a value shaped like a credential.
 */
export function judgeNamed(name: string, value: string, ctx: ValueContext): boolean {
  const strength = secretStrength(name);
  if (strength === 0) return false;
  if (isPlaceholderValue(value)) return false;
  if (!ctx.quoted && ctx.code !== false) {
    const c = ctx.next ?? 0;
    if (c === 40 /* ( */ || c === 91 /* [ */ || c === 46 /* . */ || isIdentifierPath(value) || /[([]/.test(value)) return false;
    // A type (`Option<String>`, `string[]`, `&TokenReference`, `*jwt.Token`): code.
    if (/^[A-Za-z_][\w.]*(?:<.*>|\[\])[,;]?$/.test(value) || /^[&*]+(?:mut\s+)?[A-Za-z_][\w.:<>]*[,;)]*$/.test(value)) return false;
    // A typed parameter (`token: TokenRef,`, `secret: Buffer)`): a capitalized name then , ) ; or nothing.
    if (ctx.colon === true && /^[A-Z][A-Za-z]*(?:<[^>]*>)?[,;)>:{]*$/.test(value)) return false;
    if (ctx.spaced === true && /^[A-Za-z_][A-Za-z0-9_]*[,;]?$/.test(value)) return false;
    if (/^[0-9]+$/.test(value) && strength === 1) return false;
  }
  if (strength === 2) return value.length >= 2 && !/^[0-9]{1,2}$/.test(value);
  return looksLikeCredential(value);
}
