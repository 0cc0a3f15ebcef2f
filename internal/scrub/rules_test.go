package scrub

import (
	"encoding/base64"
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// tp is a true positive: in must come back with secret (in itself when
// secret is empty) replaced by the rule's marker and nothing else changed.
type tp struct{ in, secret string }

// ruleCase follows the style of gitleaks' per-rule fixtures: true positives
// and near misses that must survive untouched.
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
// parentheses, a markdown code span and the middle of a log.
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
	rsa := pemBlock("rsa", "RSA PRIVATE KEY", 600, nil, "", "\n")

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
		{
			rule: "gitlab-token",
			tokens: []string{
				"gldt-" + fake("gldt", alnum, 20),
				"glptt-" + fake("glptt", hexLower, 40),
				"glrt-" + fake("glrt", alnum, 20),
				"glcbt-" + fake("glcbt", alnum, 5) + "_" + fake("glcbt2", alnum, 20),
				"gloas-" + fake("gloas", alnum, 64),
				"GR1348941" + fake("grrt", alnum, 20),
			},
			fps: []string{
				"GR134894112312312312312312312",
				"GR1348941XXXXXXXXXXXXXXXXXXXX",
				"glptt-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
				"gldt-" + fake("gldt-short", alnum, 12),
			},
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
			rule: "anthropic-api-key",
			tokens: []string{
				"sk-ant-api03-" + fake("ant", alnumExt, 93) + "AA",
				"sk-ant-admin01-" + fake("ant-admin", alnumExt, 93) + "AA",
				"sk-ant-oat01-" + fake("ant-oat", alnumExt, 100),
			},
			fps: []string{"sk-ant-api03-tooShort", `anthropic_token = "sk-ant-oat01-tooShort"`},
		},
		{
			rule: "openai-api-key",
			tokens: []string{
				"sk-proj-" + fake("oai-proj", alnumExt, 74) + "T3BlbkFJ" + fake("oai-proj2", alnumExt, 74),
				"sk-svcacct-" + fake("oai-svc", alnumExt, 58) + "T3BlbkFJ" + fake("oai-svc2", alnumExt, 58),
				"sk-admin-" + fake("oai-admin", alnumExt, 58) + "T3BlbkFJ" + fake("oai-admin2", alnumExt, 58),
				"sk-" + fake("oai-legacy", alnum, 20) + "T3BlbkFJ" + fake("oai-legacy2", alnum, 20),
				"sk-" + fake("oai-32", alnum, 32),
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
			rule: "slack-token",
			tokens: []string{
				"xoxb-" + fake("xoxb", digits, 12) + "-" + fake("xoxb2", digits, 13) + "-" + fake("xoxb3", alnum, 24),
				"xoxp-" + fake("xoxp", digits, 12) + "-" + fake("xoxp2", digits, 12) + "-" + fake("xoxp3", digits, 13) + "-" + fake("xoxp4", hexLower, 32),
				"xoxa-2-" + fake("xoxa", alnum, 40),
				"xoxe-1-" + fake("xoxe", alnum, 146),
			},
			fps: []string{"xoxb-", "xoxb-12345", "xoxz-" + fake("xoxz", digits, 12) + "-" + fake("xoxz2", alnum, 24), "use an xoxb- bot token"},
		},
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
			fps:    []string{"AIza" + fake("aiza-short", alnumExt, 34), "AIzaSy" + strings.Repeat("x", 33)},
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
			rule: "digitalocean-token",
			tokens: []string{
				"dop_v1_" + fake("dop", hexLower, 64),
				"doo_v1_" + fake("doo", hexLower, 64),
				"dor_v1_" + fake("dor", hexLower, 64),
			},
			fps: []string{"dop_v1_" + fake("dop-short", hexLower, 63) + " ", "dop_v1_" + strings.ToUpper(fake("dop-upper", hexLower, 64))},
		},
		{
			rule:   "sendgrid-api-token",
			tokens: []string{"SG." + fake("sg", alnumExt, 22) + "." + fake("sg2", alnumExt, 43)},
			fps:    []string{"SG." + fake("sg-short", alnum, 22) + "." + fake("sg-short2", alnum, 40) + " ", "msg.Data = append(msg.Data, b...)"},
		},
		{
			rule: "shopify-token",
			tokens: []string{
				"shpat_" + fake("shpat", hexLower, 32),
				"shpss_" + fake("shpss", hexLower, 32),
			},
			fps: []string{"shpat_" + fake("shpat-short", hexLower, 31) + " ", "shpat_" + fake("shpat-nonhex", "ghijklmnop", 32)},
		},
		{
			rule:   "vault-token",
			tokens: []string{"hvs." + fake("hvs", alnumExt, 95), "hvb." + fake("hvb", alnumExt, 140)},
			fps:    []string{"hvs." + fake("hvs-short", alnum, 50), "hvs.abc"},
		},
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
			rule: "npmrc-auth-token",
			tps: []tp{
				{in: "//registry.example.com/:_authToken=" + npmrcToken, secret: npmrcToken},
				{in: "registry=https://registry.example.com/\n_auth = " + npmrcAuth + "\nalways-auth=true", secret: npmrcAuth},
			},
			fps: []string{
				"//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
				"self._auth = auth_handler",
				"always-auth=true",
				"_authToken=short",
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
			},
			fps: []string{
				"GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}",
				"DB_PASSWORD=$DB_PASSWORD",
				"DB_PASSWORD=settings.DB_PASSWORD",
				"password = hunter2hunter2",
				"TOKEN_FILE=/run/secrets/token",
				"API_KEY=short",
				"SECRET_KEY = get_random_secret_key()",
				`TOKEN_TYPE = "bearer"`,
				"PASSWORD_MIN_LENGTH = 12",
				"API_TOKEN=<your token>",
				"API_TOKEN=changeme",
				"\tconst TOKEN_EOF = iota",
				"	token := lexer.NextToken()",
			},
		},
	}
}

func TestRuleCasesCoverEveryRule(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range ruleCases() {
		covered[c.rule] = true
	}
	for _, r := range DefaultRules() {
		if !covered[r.Name] {
			t.Errorf("rule %q has no test case", r.Name)
		}
	}
}

func TestDefaultRules(t *testing.T) {
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

// TestKeywordsInEveryMatch checks the fact the prefilter relies on: every
// match of a rule contains one of its keywords.
func TestKeywordsInEveryMatch(t *testing.T) {
	byName := map[string]Rule{}
	for _, r := range DefaultRules() {
		byName[r.Name] = r
	}
	for _, c := range ruleCases() {
		r := byName[c.rule]
		ins := slices.Clone(c.tokens)
		for _, p := range c.tps {
			ins = append(ins, p.in)
		}
		if r.perLine {
			var lines []string
			for _, in := range ins {
				lines = append(lines, strings.Split(in, "\n")...)
			}
			ins = lines
		}
		for _, in := range ins {
			for _, m := range r.Pattern.FindAllString(in, -1) {
				has := func(k string) bool { return strings.Contains(strings.ToLower(m), strings.ToLower(k)) }
				if r.exactKeywords {
					has = func(k string) bool { return strings.Contains(m, k) }
				}
				if !slices.ContainsFunc(r.Keywords, has) {
					t.Errorf("rule %s: match %q contains none of the keywords %q", r.Name, m, r.Keywords)
				}
			}
		}
	}
}

// TestSingleLineRules checks that no default rule other than the multi-line
// ones can match a line break, which lets Redact run them line by line.
func TestSingleLineRules(t *testing.T) {
	for _, r := range DefaultRules() {
		re, err := syntax.Parse(r.Pattern.String(), syntax.Perl)
		if err != nil {
			t.Fatalf("rule %s: %v", r.Name, err)
		}
		crosses := matchesNewline(re)
		if crosses != r.multiline {
			t.Errorf("rule %s: can match a line break = %v, but multiline = %v", r.Name, crosses, r.multiline)
		}
	}
}

func matchesNewline(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpAnyChar:
		return true
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == '\n' {
				return true
			}
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i] <= '\n' && '\n' <= re.Rune[i+1] {
				return true
			}
		}
	}
	for _, sub := range re.Sub {
		if matchesNewline(sub) {
			return true
		}
	}
	return false
}

func TestRuleNamesFitMarker(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range DefaultRules() {
		if seen[r.Name] {
			t.Errorf("duplicate rule name %q", r.Name)
		}
		seen[r.Name] = true
		if !markerRE.MatchString(marker(r.Name)) || !userRuleNameRE.MatchString(r.Name) {
			t.Errorf("rule name %q does not fit a marker", r.Name)
		}
		for _, k := range r.Keywords {
			if len(k) < 2 || strings.IndexFunc(k, func(c rune) bool { return c > unicode.MaxASCII }) >= 0 {
				t.Errorf("rule %s: keyword %q must be ASCII and at least two bytes", r.Name, k)
			}
		}
	}
}

func TestDefaultRulesIsACopy(t *testing.T) {
	a := DefaultRules()
	a[0].Keywords[0] = "changed"
	a[1].Name = "changed"
	b := DefaultRules()
	if b[0].Keywords[0] == "changed" || b[1].Name == "changed" {
		t.Fatal("DefaultRules returned shared state")
	}
}
