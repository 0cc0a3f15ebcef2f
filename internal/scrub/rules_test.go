package scrub

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"unicode"
)

// tp is a true positive: in must come back with secret (in itself when
// secret is empty) replaced by the rule's marker and nothing else changed.
type tp struct{ in, secret string }

// ruleCase follows the style of gitleaks' per-rule fixtures: true positives
// and near misses that must survive untouched. Rule names are gitleaks rule
// ids or this package's own.
type ruleCase struct {
	rule string
	// tokens are bare secrets; each is also tried inside the contexts below.
	tokens []string
	// tps are texts whose secret part depends on its surroundings.
	tps []tp
	fps []string
}

// tokenContexts are the surroundings a bare token is tried in: alone, at the
// start and end of a text, quoted, in JSON, YAML, a shell line, a URL query,
// parentheses, a markdown code span, the middle of a log and a sentence.
var tokenContexts = []string{
	"%s",
	"%s trailing words",
	"leading words %s",
	`token = "%s"`,
	`{"credential": "%s", "n": 1}`,
	"auth:\n  value: %s\n",
	"curl -H 'Authorization: Bearer %s' https://api.example.com",
	"https://api.example.com/v1?key=%s&x=1",
	"(%s)",
	"`%s`",
	"=== RUN   TestLogin\n    login_test.go:42: got %s, want nothing\n--- FAIL: TestLogin (0.00s)\n",
	"line one\r\n\t%s\r\nline three",
	"the key is %s.",
}

func ruleCases() []ruleCase {
	jwtHeader := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	jwtPayload := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"1234567890","name":"Jane Doe","iat":1516239022}`))
	jwtSig := fake("jwt-sig", alnumExt, 43)
	noneHeader := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`))
	awsSecret := fake("aws-secret", b64Std, 40)
	urlPass := fake("url-pass", alnum, 18)
	npmrcToken := fake("npmrc-uuid", hexLower, 8) + "-" + fake("npmrc-uuid2", hexLower, 4) + "-4" +
		fake("npmrc-uuid3", hexLower, 3) + "-a" + fake("npmrc-uuid4", hexLower, 3) + "-" + fake("npmrc-uuid5", hexLower, 12)
	npmrcAuth := base64.StdEncoding.EncodeToString([]byte("deploy:" + fake("npmrc-pass", alnum, 20)))
	assign := fake("assign", alnum, 20)
	generic := fake("generic", alnum, 32)
	bearer := fake("bearer", alnum, 40)
	azureKey := base64.StdEncoding.EncodeToString(fakeBytes("azure", 64))
	netrcPass := fake("netrc", alnum, 16)
	rsa := pemBlock("rsa", "RSA PRIVATE KEY", 600, nil, "", "\n")
	awsID0189, openAILegacy, openAIProject := gapTokens()
	hexKey := fake("hex-key", hexLower, 64)

	return []ruleCase{
		{
			rule: "private-key",
			tps: []tp{
				{in: rsa},
				{in: pemBlock("ec", "EC PRIVATE KEY", 120, nil, "", "\n")},
				{in: pemBlock("pkcs8", "PRIVATE KEY", 1200, nil, "", "\n")},
				{in: pemBlock("openssh", "OPENSSH PRIVATE KEY", 400, nil, "", "\n")},
				{in: pemBlock("dsa", "DSA PRIVATE KEY", 440, nil, "", "\n")},
				{in: pemBlock("enc", "ENCRYPTED PRIVATE KEY", 700, nil, "", "\n")},
				{in: pemBlock("pgp", "PGP PRIVATE KEY BLOCK", 900, []string{"Version: GnuPG v2", "Comment: test key"}, "", "\n")},
				{in: pemBlock("dek", "RSA PRIVATE KEY", 600, []string{"Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-128-CBC,3F17F5316E2BAC89"}, "", "\n")},
				{in: pemBlock("crlf", "RSA PRIVATE KEY", 600, nil, "", "\r\n")},
				{in: pemBlock("indent", "EC PRIVATE KEY", 120, nil, "\t\t", "\n"), secret: pemBlock("indent", "EC PRIVATE KEY", 120, nil, "\t\t", "\n")[2:]},
				{in: pemBlock("quoted", "RSA PRIVATE KEY", 300, nil, "> ", "\n"), secret: pemBlock("quoted", "RSA PRIVATE KEY", 300, nil, "> ", "\n")[2:]},
				{in: "config:\n  key: |\n" + pemBlock("yaml", "OPENSSH PRIVATE KEY", 400, nil, "    ", "\n") + "\n  user: deploy",
					secret: pemBlock("yaml", "OPENSSH PRIVATE KEY", 400, nil, "    ", "\n")[4:]},
				{in: `{"private_key": "` + pemBlock("json", "PRIVATE KEY", 600, nil, "", `\n`) + `\n", "client_email": "svc@example.iam"}`,
					secret: pemBlock("json", "PRIVATE KEY", 600, nil, "", `\n`)},
				{in: "KEY=" + pemBlock("flat", "RSA PRIVATE KEY", 300, nil, "", " "), secret: pemBlock("flat", "RSA PRIVATE KEY", 300, nil, "", " ")},
				{in: "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"rsa-key-20240101\"\n" +
					fake("ssh2", b64Std, 64) + "\n" + fake("ssh2b", b64Std, 40) + "==\n---- END SSH2 ENCRYPTED PRIVATE KEY ----"},
			},
			fps: []string{
				pemBlock("pub", "PUBLIC KEY", 290, nil, "", "\n"),
				pemBlock("cert", "CERTIFICATE", 800, nil, "", "\n"),
				`if strings.HasPrefix(s, "-----BEGIN RSA PRIVATE KEY-----") {`,
				"A key looks like:\n-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----\n",
				"-----BEGIN OPENSSH PRIVATE KEY-----",
				"-----BEGIN PRIVATE KEY-----\n<your key here>\n-----END PRIVATE KEY-----",
			},
		},
		{
			rule:   "github-fine-grained-pat",
			tokens: []string{"github_pat_" + fake("gfg", alnum, 22) + "_" + fake("gfg2", alnum, 59)},
			fps: []string{
				"github_pat_" + fake("gfg-short", alnum, 40),
				"github_pat_" + strings.Repeat("X", 82),
				"the github_pat_ prefix marks fine-grained tokens",
			},
		},
		{
			rule:   "github-pat",
			tokens: []string{"ghp_" + fake("ghp", alnum, 36)},
			fps: []string{
				"ghp_" + fake("ghp-short", alnum, 35),
				"ghp_" + strings.Repeat("x", 36),
				"ghp_" + fake("ghp-dash", alnum, 20) + "-" + fake("ghp-dash2", alnum, 15),
				"tokens start with ghp_ or gho_",
			},
		},
		{
			rule:   "github-oauth",
			tokens: []string{"gho_" + fake("gho", alnum, 36)},
			fps:    []string{"gho_" + fake("gho-short", alnum, 30), "gho_" + strings.Repeat("0", 36)},
		},
		{
			rule:   "github-app-token",
			tokens: []string{"ghu_" + fake("ghu", alnum, 36), "ghs_" + fake("ghs", alnum, 36)},
			fps:    []string{"ghs_" + fake("ghs-short", alnum, 35), "ght_" + fake("ght", alnum, 36)},
		},
		{
			rule:   "github-refresh-token",
			tokens: []string{"ghr_" + fake("ghr", alnum, 36)},
			fps:    []string{"ghr_" + fake("ghr-short", alnum, 12)},
		},
		{
			rule: "gitlab-pat",
			tokens: []string{
				"glpat-" + fake("glpat", alnum, 20),
				"glpat-" + fake("glpat-r", alnumExt, 27) + "." + fake("glpat-r2", "0123456789abcdefghijklmnopqrstuvwxyz", 9),
			},
			fps: []string{"glpat-XXXXXXXXXXX-XXXXXXXX", "glpat-" + fake("glpat-short", alnum, 19), "glpat-"},
		},
		{rule: "gitlab-deploy-token", tokens: []string{"gldt-" + fake("gldt", alnum, 20)}, fps: []string{"gldt-" + fake("gldt-short", alnum, 12)}},
		{rule: "gitlab-ptt", tokens: []string{"glptt-" + fake("glptt", hexLower, 40)}, fps: []string{"glptt-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}},
		{rule: "gitlab-runner-authentication-token", tokens: []string{"glrt-" + fake("glrt", alnum, 20)}},
		{rule: "gitlab-cicd-job-token", tokens: []string{"glcbt-" + fake("glcbt", alnum, 5) + "_" + fake("glcbt2", alnum, 20)}},
		{rule: "gitlab-oauth-app-secret", tokens: []string{"gloas-" + fake("gloas", alnum, 64)}},
		{
			rule:   "gitlab-rrt",
			tokens: []string{"GR1348941" + fake("grrt", alnum, 20)},
			fps:    []string{"GR134894112312312312312312312", "GR1348941XXXXXXXXXXXXXXXXXXXX"},
		},
		{
			rule: "aws-access-token",
			tokens: []string{
				"AKIA" + fake("akia", upperNum, 16),
				"ASIA" + fake("asia", upperNum, 16),
				"ABIA" + fake("abia", upperNum, 16),
				"ACCA" + fake("acca", upperNum, 16),
			},
			fps: []string{
				"AKIAIOSFODNN7EXAMPLE",
				"AKIAXXXXXXXXXXXXXXXX",
				"TODAYINASIAASACKOFRICEFELLOVER",
				"We ship to ASIA and EUROPE; AKIA is the prefix of an access key id.",
				"AKIA" + fake("akia-short", upperNum, 15),
				"AKIA" + strings.ToLower(fake("akia-lower", upperNum, 16)),
				"X" + "AKIA" + fake("akia-glued", upperNum, 16),
				"TZ=Asia/Tokyo",
			},
		},
		{
			rule:   "anthropic-api-key",
			tokens: []string{"sk-ant-api03-" + fake("ant", alnumExt, 93) + "AA"},
			fps:    []string{"sk-ant-api03-tooShort"},
		},
		{rule: "anthropic-admin-api-key", tokens: []string{"sk-ant-admin01-" + fake("ant-admin", alnumExt, 93) + "AA"}},
		{
			rule:   "anthropic-oauth-token",
			tokens: []string{"sk-ant-oat01-" + fake("ant-oat", alnumExt, 100), "sk-ant-ort01-" + fake("ant-ort", alnumExt, 100)},
			fps:    []string{`anthropic_token = "sk-ant-oat01-tooShort"`, "sk-ant-oat01-" + strings.Repeat("x", 100)},
		},
		{
			rule: "openai-api-key",
			tokens: []string{
				"sk-proj-" + fake("oai-proj", alnumExt, 74) + "T3BlbkFJ" + fake("oai-proj2", alnumExt, 74),
				"sk-svcacct-" + fake("oai-svc", alnumExt, 58) + "T3BlbkFJ" + fake("oai-svc2", alnumExt, 58),
				"sk-admin-" + fake("oai-admin", alnumExt, 58) + "T3BlbkFJ" + fake("oai-admin2", alnumExt, 58),
				"sk-" + fake("oai-legacy", alnum, 20) + "T3BlbkFJ" + fake("oai-legacy2", alnum, 20),
			},
			fps: []string{
				"sk-learn",
				"pip install scikit-learn (imported as sklearn, often called sk-learn)",
				"sk-" + fake("oai-short", alnum, 31),
				"sk-proj-short",
				"task-" + fake("task", alnum, 40),
				"sk-" + strings.Repeat("a", 40),
			},
		},
		{
			// The AWS key ids gitleaks leaves out: digits 0, 1, 8 and 9.
			rule:   "aws-access-key-id",
			tokens: []string{awsID0189, "ASIA" + fake("asia-any", upperDigits, 16)},
			fps: []string{
				"Access key ids look like AKIAExample.",
				"AKIA" + fake("akia-any-short", upperDigits, 15),
				"AKIA" + fake("akia-any-long", upperDigits, 17),
				"AKIA0123456789ABCDEF",
				"AKIA" + strings.Repeat("0", 16),
				"AKIA" + fake("akia-any-under", upperDigits, 16) + "_ROLE",
				"ASIAPACIFICHEADQUARTERS",
			},
		},
		{
			rule: "openai-key",
			tokens: []string{
				openAILegacy,  // 48 characters, no T3BlbkFJ
				openAIProject, // the short project format
				"sk-proj-" + fake("oai-proj-short-marker", alnum, 20) + "T3BlbkFJ" + fake("oai-proj-short-marker2", alnum, 20),
				"sk-proj-" + fake("oai-proj-mid", alnumExt, 120),
				"sk-svcacct-" + fake("oai-svc-any", alnumExt, 64),
				"sk-None-" + fake("oai-none", alnum, 48),
			},
			fps: []string{
				"sk-learn",
				"sk-" + fake("oai-47", alnum, 47),
				"sk-" + fake("oai-48-dash", alnum, 48) + "-suffix",
				"sk-proj-" + fake("oai-proj-39", alnumExt, 39),
				"sk-proj-" + strings.Repeat("x", 48),
				"sk-admin-dashboard-component-loading-state-spinner-overlay",
				"sk-proj-frontend_settings_page_with_the_new_layout",
				"sk-" + strings.Repeat("Ab1", 16),
				"sk-" + "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKL",
				"task-" + fake("oai-task", alnum, 48),
				"risk-" + fake("oai-risk", alnum, 48),
			},
		},
		{
			rule: "anthropic-key",
			tokens: []string{
				// gitleaks wants AA at the end and exactly 93 characters before it.
				"sk-ant-api03-" + fake("ant-bb", alnumExt, 93) + "BB",
				"sk-ant-api03-" + fake("ant-short", alnumExt, 64),
				"sk-ant-admin01-" + fake("ant-admin-any", alnumExt, 80),
				"sk-ant-sid01-" + fake("ant-sid", alnumExt, 86),
			},
			fps: []string{
				"sk-ant-api03-tooShort",
				"sk-ant-api03-" + strings.Repeat("x", 64),
				"sk-ant-api03-" + strings.Repeat("X", 40),
				"sk-ant-" + fake("ant-31", alnum, 31),
				"the sk-ant- prefix marks an Anthropic key",
			},
		},
		{
			rule: "slack-token",
			tokens: []string{
				// Numeric parts of 9 digits: gitleaks wants 10 to 13.
				"xoxp-" + fake("xoxp9", digits, 9) + "-" + fake("xoxp9b", digits, 9) + "-" + fake("xoxp9c", digits, 9) + "-" + fake("xoxp9d", hexLower, 32),
				"xoxb-" + fake("xoxb9", digits, 9) + "-" + fake("xoxb9b", digits, 9) + "-" + fake("xoxb9c", alnum, 24),
			},
			fps: []string{
				"xoxp-1234567890",
				"xoxp-1234-1234-1234-" + fake("xoxp-fp", hexLower, 32),
				"xoxp-123456789-123456789-123456789-" + fake("xoxp-fp2", hexLower, 32),
				"xoxb-" + fake("xoxb-fp", digits, 9) + "-" + fake("xoxb-fp2", digits, 9) + "-" + strings.Repeat("X", 24),
				"xoxb-" + fake("xoxb-fp3", digits, 9) + "-shortTail",
			},
		},
		{
			rule:   "slack-bot-token",
			tokens: []string{"xoxb-" + fake("xoxb", digits, 12) + "-" + fake("xoxb2", digits, 13) + "-" + fake("xoxb3", alnum, 24)},
			fps:    []string{"xoxb-", "xoxb-12345", "xoxz-" + fake("xoxz", digits, 12) + "-" + fake("xoxz2", alnum, 24), "use an xoxb- bot token"},
		},
		{
			rule:   "slack-user-token",
			tokens: []string{"xoxp-" + fake("xoxp", digits, 12) + "-" + fake("xoxp2", digits, 12) + "-" + fake("xoxp3", digits, 13) + "-" + fake("xoxp4", hexLower, 32)},
			fps:    []string{"see logs/xoxo-export.txt and xoxp-rotation.md"},
		},
		{rule: "slack-legacy-workspace-token", tokens: []string{"xoxa-2-" + fake("xoxa", alnum, 40)}},
		{rule: "slack-config-refresh-token", tokens: []string{"xoxe-1-" + fake("xoxe", alnum, 146)}},
		{
			rule:   "slack-app-token",
			tokens: []string{"xapp-1-A" + fake("xapp", upperNum, 10) + "-" + fake("xapp2", digits, 13) + "-" + fake("xapp3", hexLower, 64)},
			fps:    []string{"xapp-1-short", "xapp-"},
		},
		{
			rule: "slack-webhook-url",
			tokens: []string{
				"https://hooks.slack.com/services/T" + fake("slk-t", upperNum, 8) + "/B" + fake("slk-b", upperNum, 8) + "/" + fake("slk-s", alnum, 24),
				"hooks.slack.com/workflows/T" + fake("slk-wt", upperNum, 10) + "/A" + fake("slk-wa", upperNum, 10) + "/" + fake("slk-wn", digits, 18) + "/" + fake("slk-ws", alnum, 24),
			},
			fps: []string{"https://hooks.slack.com/services/", "post to hooks.slack.com with a webhook", "https://hooks.slack.com/services/T000/B000/XXXX"},
		},
		{
			rule:   "gcp-api-key",
			tokens: []string{"AIza" + fake("aiza", alnumExt, 35)},
			fps: []string{
				"AIza" + fake("aiza-short", alnumExt, 34), "AIzaSy" + strings.Repeat("x", 33),
				"AIzaSyabcdefghijklmnopqrstuvwxyz1234567", // a public example key (gitleaks' allowlist)
			},
		},
		{
			rule:   "gcp-oauth-client-secret",
			tokens: []string{"GOCSPX-" + fake("gocspx", alnumExt, 28)},
			fps:    []string{"GOCSPX-" + fake("gocspx-short", alnum, 10), "GOCSPX-" + strings.Repeat("x", 28)},
		},
		{
			rule: "stripe-access-token",
			tokens: []string{
				"sk_live_" + fake("stripe", alnum, 24),
				"rk_live_" + fake("stripe-rk", alnum, 99),
				"sk_test_" + fake("stripe-test", alnum, 24),
			},
			fps: []string{"pk_live_" + fake("stripe-pk", alnum, 24), "sk_live_" + fake("stripe-short", alnum, 9), "sk_live_" + strings.Repeat("x", 24)},
		},
		{
			rule:   "npm-access-token",
			tokens: []string{"npm_" + fake("npm", alnum, 36)},
			fps:    []string{"npm_" + fake("npm-short", alnum, 35), "npm_config_cache=/tmp/npm", "npm_" + strings.Repeat("0", 36)},
		},
		{
			rule:   "pypi-upload-token",
			tokens: []string{"pypi-AgEIcHlwaS5vcmc" + fake("pypi", alnumExt, 70)},
			fps:    []string{"pypi-AgEIcHlwaS5vcmc" + fake("pypi-short", alnum, 20), "pypi-" + fake("pypi-other", alnum, 70)},
		},
		{
			rule:   "huggingface-access-token",
			tokens: []string{"hf_" + fake("hf", letters, 34)},
			fps:    []string{"hf_" + fake("hf-short", letters, 33), "hf_" + fake("hf-long", letters, 35), "hf_model_name_for_the_tokenizer_config"},
		},
		{
			rule:   "digitalocean-pat",
			tokens: []string{"dop_v1_" + fake("dop", hexLower, 64)},
			fps:    []string{"dop_v1_" + fake("dop-short", hexLower, 63) + " ", "dop_v1_" + strings.ToUpper(fake("dop-upper", hexLower, 64))},
		},
		{rule: "digitalocean-access-token", tokens: []string{"doo_v1_" + fake("doo", hexLower, 64)}},
		{rule: "digitalocean-refresh-token", tokens: []string{"dor_v1_" + fake("dor", hexLower, 64)}},
		{
			rule:   "sendgrid-api-token",
			tokens: []string{"SG." + fake("sg", alnumExt, 22) + "." + fake("sg2", alnumExt, 43)},
			fps:    []string{"SG." + fake("sg-short", alnum, 22) + "." + fake("sg-short2", alnum, 40) + " ", "msg.Data = append(msg.Data, b...)"},
		},
		{
			rule:   "shopify-access-token",
			tokens: []string{"shpat_" + fake("shpat", hexLower, 32)},
			fps:    []string{"shpat_" + fake("shpat-short", hexLower, 31) + " ", "shpat_" + fake("shpat-nonhex", "ghijklmnop", 32)},
		},
		{rule: "shopify-shared-secret", tokens: []string{"shpss_" + fake("shpss", hexLower, 32)}},
		{
			rule:   "vault-service-token",
			tokens: []string{"hvs." + fake("hvs", alnumExt, 95)},
			fps:    []string{"hvs." + fake("hvs-short", alnum, 50), "hvs.abc"},
		},
		{rule: "vault-batch-token", tokens: []string{"hvb." + fake("hvb", alnumExt, 140)}},
		{
			rule:   "databricks-api-token",
			tokens: []string{"dapi" + fake("dapi", hexLower, 32), "dapi" + fake("dapi2", hexLower, 32) + "-2"},
			fps:    []string{"dapi" + fake("dapi-short", hexLower, 31), "dapi" + fake("dapi-long", hexLower, 33), "the dapi prefix"},
		},
		{
			rule:   "age-secret-key",
			tokens: []string{"AGE-SECRET-KEY-1" + fake("age", "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)},
			fps:    []string{"AGE-SECRET-KEY-1" + fake("age-short", "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 57) + " ", "AGE-SECRET-KEY-1 is the prefix"},
		},
		{
			rule: "jwt",
			tokens: []string{
				jwtHeader + "." + jwtPayload + "." + jwtSig,
				noneHeader + "." + jwtPayload + ".",
			},
			fps: []string{
				jwtHeader,
				jwtHeader + jwtPayload,
				"eyJhbGciOi.eyJ.x",
				"monkeyJump.eyJumpingJack.done",
			},
		},
		{
			rule: "url-password",
			tps: []tp{
				{in: "DATABASE_URL_IS postgres://app:" + urlPass + "@db.internal:5432/app?sslmode=disable", secret: urlPass},
				{in: "git clone https://oauth2:" + urlPass + "x@gitlab.example.com/group/repo.git", secret: urlPass + "x"},
				{in: "redis://:" + urlPass + "@cache:6379/0", secret: urlPass},
				{in: "amqp://guest:p%40ss" + urlPass + "@rabbit/", secret: "p%40ss" + urlPass},
				{in: "mongodb+srv://admin:" + urlPass + "@cluster0.example.net/db", secret: urlPass},
			},
			fps: []string{
				"postgres://user:password@localhost/db",
				"https://${USER}:${PASSWORD}@host/x",
				"https://user:$TOKEN@github.com/org/repo.git",
				"https://user:<password>@host",
				"https://u:%s@host",
				"https://u:****@host",
				"https://example.com:8080/path",
				"git@github.com:org/repo.git",
				"ssh://git@github.com/org/repo",
				"https://user@host/x",
				"http://[::1]:8080/",
			},
		},
		{
			rule: "aws-secret-access-key",
			tps: []tp{
				{in: "aws_secret_access_key = " + awsSecret, secret: awsSecret},
				{in: "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key=" + awsSecret + "\nregion = eu-west-1", secret: awsSecret},
				{in: "export AWS_SECRET_ACCESS_KEY=" + awsSecret, secret: awsSecret},
				{in: `{"AccessKeyId": "ASIAIOSFODNN7EXAMPLE", "SecretAccessKey": "` + awsSecret + `"}`, secret: awsSecret},
				{in: "secret-access-key: '" + awsSecret + "'", secret: awsSecret},
				{in: "spring.aws.secret.access.key=" + awsSecret, secret: awsSecret},
			},
			fps: []string{
				"aws_secret_access_key = " + awsSecret[:39],
				"aws_secret_access_key = " + awsSecret + "X",
				"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
				"aws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}",
				"set aws_secret_access_key in ~/.aws/credentials",
				"aws_secret_access.key = " + awsSecret,
			},
		},
		{
			rule: "generic-api-key",
			tps: []tp{
				{in: "//registry.example.com/:_authToken=" + npmrcToken, secret: npmrcToken},
				{in: "registry=https://registry.example.com/\n_auth = " + npmrcAuth + "\nalways-auth=true", secret: npmrcAuth},
				{in: "client_secret: " + generic, secret: generic},
				{in: `{"apiKey": "` + generic + `"}`, secret: generic},
			},
			fps: []string{
				"//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
				"self._auth = auth_handler",
				"always-auth=true",
				"_authToken=short",
				`"kms_key_id": "555ea4a3-d53a-4412-9c66-3a7cb667b0d6",`,
				"foreignKey=6k2fMqHmAghSvCSBFS0s2Cq=IDv2U6",
			},
		},
		{
			rule: "secret-assignment",
			tps: []tp{
				{in: "DB_PASSWORD=" + assign, secret: assign},
				{in: "export API_TOKEN='" + assign + "'", secret: "'" + assign + "'"},
				{in: "APP_SECRET=\"correct horse battery staple\"", secret: "\"correct horse battery staple\""},
				{in: "services:\n  db:\n    environment:\n      - MYSQL_ROOT_PASSWORD=" + assign + "\n", secret: assign},
				{in: "env:\n  SIGNING_KEY: " + assign + "\n", secret: assign},
				{in: "DB_PASS=" + assign + " # rotated monthly", secret: assign},
				{in: "SECRET=" + assign, secret: assign},
				// Anywhere in a line: a goal's first line, a title, a tree summary.
				{in: "title: rotate DB_PASSWORD=hunter2hunter2 in prod", secret: "hunter2hunter2"},
				{in: "- [ ] 1.2 fix login (PGPASSWORD=hunter2hunter2)", secret: "hunter2hunter2"},
				{in: "# Goal\n\ntitle: set API_TOKEN=" + assign + " then retry", secret: assign},
				// Passwords in any case; an unquoted value ends its line.
				{in: "password = hunter2hunter2", secret: "hunter2hunter2"},
				{in: "db:\n  password: hunter2\n  user: app\n", secret: "hunter2"},
				{in: `{"password": "hunter2", "user": "app"}`, secret: "hunter2"},
				{in: "userPassword = 's3cr3t!!'", secret: "s3cr3t!!"},
				{in: "passphrase=open-sesame", secret: "open-sesame"},
				{in: "PRIVATE_KEY=0x" + hexKey + "\n", secret: "0x" + hexKey},
			},
			fps: []string{
				"GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}",
				"DB_PASSWORD=$DB_PASSWORD",
				"DB_PASSWORD=settings.DB_PASSWORD",
				"password: see the team vault",
				"Reset your password: instructions follow below.",
				"password: string",
				"password: ${DB_PASS}",
				"password_hash = bcrypt(password)",
				"PasswordMinLength: 12",
				"PWD=/home/runner/work",
				"APITOKEN=hunter2hunter2",
				"TOKEN_FILE=/run/secrets/token",
				"API_KEY=short",
				"SECRET_KEY = get_random_secret_key()",
				`TOKEN_TYPE = "bearer"`,
				"PASSWORD_MIN_LENGTH = 12",
				"API_TOKEN=<your token>",
				"API_TOKEN=changeme",
				"\tconst TOKEN_EOF = iota",
				"	token := lexer.NextToken()",
				// Code around the value, not a value.
				`cmd := "PGPASSWORD=" + password + " psql -h db"`,
				`env = "API_TOKEN=" + token + "\n"`,
				`conn = "password=" + pw + ";host=db"`,
				`$dsn = "password='" . $pass . "' host=db";`,
				`"DB_PASSWORD=" + fake("bench-env-pw", alnum, 16),`,
				"\tFS_IOC_ADD_ENCRYPTION_KEY = 0xc0506617",
			},
		},
		{
			rule: "authorization-header",
			tps: []tp{
				{in: "Authorization: Bearer " + bearer, secret: bearer},
				{in: "authorization: Basic " + npmrcAuth, secret: npmrcAuth},
				{in: `{"headers": {"Authorization": "Token ` + bearer + `"}}`, secret: bearer},
				{in: "Proxy-Authorization: " + bearer, secret: bearer},
			},
			fps: []string{
				"Authorization: Bearer $TOKEN",
				"Authorization: Bearer <token>",
				"authorization: required",
				"Authorization: Bearer YOUR_TOKEN_HERE",
				"the Authorization header carries the token",
			},
		},
		{
			rule: "bearer-token",
			tps: []tp{
				{in: "retrying with bearer " + bearer, secret: bearer},
			},
			fps: []string{"uses bearer token authentication", "Bearer xxxxxxxxxxxxxxxxxxxxxxxx", "bearer abcdefghijklmnopqrstuvwxyz"},
		},
		{
			rule: "azure-access-key",
			tps: []tp{
				{in: "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + azureKey + ";EndpointSuffix=core.windows.net", secret: azureKey},
				{in: "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=" + azureKey[:44], secret: azureKey[:44]},
			},
			fps: []string{"AccountKey=<key>;", "AccountKey=xxxxxxxxxxxxxxxxxxxxxxxxxxxx", "set AccountKey in the connection string"},
		},
		{
			rule: "netrc-password",
			tps: []tp{
				{in: "machine api.example.com login deploy password " + netrcPass, secret: netrcPass},
				{in: "machine git.example.com\n  login deploy\n  password " + netrcPass + "\n", secret: netrcPass},
				{in: "default login anonymous password " + netrcPass, secret: netrcPass},
			},
			fps: []string{"machine learning password reset flows", "the default password policy", "machine example.com login deploy password ********"},
		},
	}
}

// upperDigits is the alphabet of an AWS key id of any digits.
const upperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// gapTokens returns keys of SPEC §9's families that gitleaks' rules miss
// (TestPrefixFamiliesBeyondGitleaks checks that they do): an AWS key id with
// the digits 0, 1, 8 and 9, a legacy OpenAI key of 48 characters without
// the T3BlbkFJ marker, and an OpenAI project key in the short format.
func gapTokens() (awsID, openAILegacy, openAIProject string) {
	awsID = "AKIA" + fake("akia-0189", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", 12)
	awsID = awsID[:6] + "0" + awsID[6:9] + "1" + awsID[9:12] + "8" + awsID[12:] + "9"
	openAILegacy = "sk-" + fake("oai-legacy-48", alnum, 48)
	openAIProject = "sk-proj-" + fake("oai-proj-48", alnumExt, 48)
	return awsID, openAILegacy, openAIProject
}

func TestRuleCasesCoverOwnRules(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range ruleCases() {
		covered[c.rule] = true
	}
	for _, r := range append(ownRules(), privateKeyRule()) {
		if !covered[r.name] {
			t.Errorf("rule %q has no test case", r.name)
		}
	}
	known := map[string]bool{}
	for _, r := range builtinRules() {
		known[r.name] = true
	}
	for name := range covered {
		if !known[name] {
			t.Errorf("test case for %q, which is no rule", name)
		}
	}
}

func TestBuiltinRules(t *testing.T) {
	s := mustNew(t, Options{Enabled: true})
	for _, c := range ruleCases() {
		t.Run(c.rule, func(t *testing.T) {
			var tps []tp
			for _, tok := range c.tokens {
				for _, ctx := range tokenContexts {
					tps = append(tps, tp{in: fmt.Sprintf(ctx, tok), secret: tok})
				}
			}
			tps = append(tps, c.tps...)
			for i, p := range tps {
				secret := p.secret
				if secret == "" {
					secret = p.in
				}
				if !strings.Contains(p.in, secret) {
					t.Fatalf("tp %d: test bug: secret not in input", i)
				}
				want := strings.Replace(p.in, secret, marker(c.rule), 1)
				got, counts := s.Redact(p.in)
				if got != want {
					t.Errorf("tp %d: Redact(%q)\n got %q\nwant %q", i, p.in, got, want)
				}
				if !equalCounts(counts, map[string]int{c.rule: 1}) {
					t.Errorf("tp %d: counts = %v, want %s: 1", i, counts, c.rule)
				}
			}
			for i, fp := range c.fps {
				got, counts := s.Redact(fp)
				if got != fp || len(counts) != 0 {
					t.Errorf("fp %d: Redact(%q) = %q, %v; want it unchanged", i, fp, got, counts)
				}
			}
		})
	}
}

// TestBuiltinRulesCompile compiles every built-in rule and checks what the
// index and the markers rely on.
func TestBuiltinRulesCompile(t *testing.T) {
	ids := map[string]bool{}
	for _, g := range gitleaksRules {
		ids[g.ID] = true
	}
	for _, r := range ownRules() {
		if ids[r.name] {
			t.Errorf("rule %q takes the name of a gitleaks rule", r.name)
		}
	}
	seen := map[string]bool{}
	for _, r := range builtinRules() {
		seen[r.name] = true
		if !markerRE.MatchString(marker(r.name)) || !userRuleNameRE.MatchString(r.name) {
			t.Errorf("rule name %q does not fit a marker", r.name)
		}
		for _, k := range r.keywords {
			if len(k) < 2 || k != strings.ToLower(k) || strings.IndexFunc(k, func(c rune) bool { return c > unicode.MaxASCII }) >= 0 {
				t.Errorf("rule %s: keyword %q must be lower-case ASCII of two bytes or more", r.name, k)
			}
		}
		func() {
			defer func() {
				if e := recover(); e != nil {
					t.Errorf("rule %s: %v", r.name, e)
				}
			}()
			r.matcher()
		}()
	}
	if !seen["generic-api-key"] || !seen["github-pat"] || !seen["private-key"] {
		t.Errorf("gitleaks' rules are missing: %d rules", len(seen))
	}
}
