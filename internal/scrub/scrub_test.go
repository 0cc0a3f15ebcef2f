package scrub

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestFalsePositiveGuards feeds text an agent needs intact: none of it may
// change.
func TestFalsePositiveGuards(t *testing.T) {
	s := mustNew(t, Options{Enabled: true})
	tests := []struct{ name, in string }{
		{"git commit hash", "commit 3f786850e387550fdab836ed7e6dc881de23001b\nAuthor: Jane <jane@example.com>"},
		{"git log oneline", "3f78685 fix: handle empty tree\n1b2c3d4 feat: add scrubber\n"},
		{"many 40-hex hashes", strings.Repeat("a94a8fe5ccb19ba61c4c0873d391e987982fbbd3 refs/heads/main\n", 5)},
		{"64-hex hash", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  empty.txt"},
		{"sha256 digest", "image: golang@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"go.sum lines", "github.com/spf13/cobra v1.10.2 h1:HPRbJPEdfJL3xnKcLD2GcFv7ZmbMYIKBRbL1z0aSsXg=\n" +
			"github.com/spf13/cobra v1.10.2/go.mod h1:7C1pvHqHw5A4vrJfjNwvOdzYu0Gml16OCs2GRiTUUS0=\n"},
		{"UUIDs", "request 0f8fad5b-d9cb-469f-a165-70867728950e failed; trace 7c9e6679-7425-40de-944b-e07fc1f90ae7"},
		{"base64 test data", "want := \"" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("the quick brown fox jumps over the lazy dog ", 4))) + "\""},
		{"base64 JSON", "payload: " + base64.StdEncoding.EncodeToString([]byte(`{"user":"jane","roles":["admin"]}`))},
		{"sk-learn", "We use sk-learn (scikit-learn) for the baseline model."},
		{"AKIA in a sentence", "Keys beginning with AKIA are long-term; ASIA keys are temporary. AKIA alone is not a key."},
		{"go test output", "--- FAIL: TestTokenize (0.00s)\n    lexer_test.go:88: token 12: got IDENT, want STRING\nFAIL\nexit status 1\nFAIL\tgithub.com/x/lexer\t0.012s\n"},
		{"go code with tokens", "func (l *Lexer) NextToken() Token {\n\ttok := l.scan()\n\tif tok.Kind == EOF {\n\t\treturn tok\n\t}\n\treturn tok\n}\n"},
		{"password field in code", "type Login struct {\n\tUser     string `json:\"user\"`\n\tPassword string `json:\"password\"`\n}\n"},
		{"urls", "see https://pkg.go.dev/regexp/syntax and http://localhost:8080/healthz?verbose=1"},
		{"ssh remote", "git remote add origin git@github.com:runner-cli/runner.git"},
		{"secret reference in CI", "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n  NPM_TOKEN: ${NPM_TOKEN}\n"},
		{"public key", pemBlock("fp-pub", "PUBLIC KEY", 290, nil, "", "\n")},
		{"ssh public key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl jane@laptop"},
		{"markdown rule", "Results\n-------\n\n----\n"},
		{"existing markers", "token was [REDACTED:github-pat] and key [REDACTED:env:OPENAI_API_KEY]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, counts := s.Redact(tt.in)
			if got != tt.in || len(counts) != 0 {
				t.Errorf("Redact changed the text:\n in %q\nout %q\ncounts %v", tt.in, got, counts)
			}
		})
	}
}

// heldOutBenign are strings of the kinds a coding agent's prompt carries
// that are no secrets, apart from the rule cases and gitleaks' samples;
// TestHeldOutBenign requires that none of them is redacted.
var heldOutBenign = []struct{ name, in string }{
	{"base64 of a PNG header", `<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==">`},
	{"go.sum line", "golang.org/x/sys v0.28.0 h1:Fksou7UEQUWlKvIdsqzJmUmCX3cZuD2+P3XyyzwMhlA=\n"},
	{"Docker image digest", "FROM golang:1.23-alpine@sha256:c694a4d291a13a9f9d94933395673494fc2cc9d4777b85df3a7e70b3492d3574 AS build"},
	{"CSS colour list", ":root { --palette: #1e293b, #334155, #475569, #64748b, #94a3b8, #cbd5e1, #f1f5f9; }"},
	{"long camelCase identifier", "refreshIntervalForAccessTokenCacheInSeconds := computeTokenRefreshIntervalFromConfiguration(cfg)"},
	{"URL with a query string", "GET https://api.github.com/search/code?q=addClass+in:file+language:js&per_page=100&page=2&sort=indexed&order=desc"},
	{"semver with build metadata", "version: 1.4.0-rc.2+build.20240611.sha.5114f85e"},
	{"k8s ConfigMap data", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\ndata:\n  LOG_LEVEL: debug\n  FEATURE_FLAGS: search,export,billing\n"},
	{"k8s Secret without values", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\nstringData:\n  username: app\ndata: {}\n"},
	{"k8s secret reference", "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db-credentials\n        key: password\n"},
	{"npm integrity", `"integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg=="`},
	{"sha256sum output", "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9  runner_1.4.0_linux_amd64.tar.gz"},
	{"git diff header", "diff --git a/internal/auth/token.go b/internal/auth/token.go\nindex 83db48f..bf269f4 100644\n"},
	{"ETag", `ETag: "33a64df551425fcc55e4d42a148795d9f25f89d4"`},
	{"UUIDs in a log line", "level=info request_id=2f1c9b7e-8d4a-4f3b-9c2e-1a7b6d5e4f30 session=0c8f6a2e-5b3d-4e1f-a7c9-2d4b6f8e0a13 status=200"},
	{"source map", "//# sourceMappingURL=data:application/json;base64,eyJ2ZXJzaW9uIjozLCJzb3VyY2VzIjpbImluZGV4LnRzIl0sIm1hcHBpbmdzIjoiQUFBQSJ9"},
	{"SSH key fingerprint", "publicKeyFingerprint: SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8"},
	{"argon2 hash parameters", "password_hash: $argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG"},
	{"CI cache key", "key: ${{ runner.os }}-go-${{ hashFiles('**/go.sum') }}"},
	{"words with sk- and AKIA", "Blocked on task-17 and task-18; see risk-assessment-2024-q3.md, the sk-learn notes, and keys like AKIAExample."},
	{"password from a variable", "const user = await User.create({ email, password: hashedPassword, role })"},
	{"password field mapping", "confirm_password: password_confirmation\n"},
	{"password rule message", `  "password": "Password must contain at least one digit",`},
	{"key file path", "SSH_KEY: ~/.ssh/id_ed25519\n"},
	{"signing key path", "SIGNING_KEY: /etc/apt/keyrings/docker.gpg\n"},
	{"master key path", "RAILS_MASTER_KEY=config/master.key\n"},
	{"KMS key alias", "KMS_KEY: alias/aws/s3\n"},
	{"primary key column", "PRIMARY_KEY: account_id\n"},
	{"sort key column", "DYNAMO_SORT_KEY=created_at\n"},
	{"partition key field", "PARTITION_KEY=tenantId\n"},
	{"cache key", "CACHE_KEY=deps-v3-linux-go1.23\n"},
	{"CSRF header name", "CSRF_TOKEN: X-CSRF-Token\n"},
	{"elided token in documentation", "export OPENAI_API_KEY=sk-...\nexport OP_SERVICE_ACCOUNT_TOKEN=ops_eyJzaWduSW5BZGRyZXNzIjoiaHR0cHM6...\n"},
	{"counting placeholder", `auth_token: "tok_1234567890abcdef"`},
	{"key length", "ENCRYPTION_KEY_LENGTH=32\n"},
	{"token expiry", "REFRESH_TOKEN_EXPIRY=7d\n"},
	{"credentials file", "GOOGLE_APPLICATION_CREDENTIALS=/var/secrets/google/key.json\n"},
	{"AWS profile", "export AWS_PROFILE=staging-admin\n"},
	{"key prefix", "API_KEY_PREFIX: sk_live_\n"},
	{"ERB expansion", "secret_key_base: <%= ENV[\"SECRET_KEY_BASE\"] %>\n"},
	{"secret name", "STRIPE_WEBHOOK_SECRET_NAME=stripe-webhook-signing\n"},
	{"token URL", "access_token_url: https://github.com/login/oauth/access_token\n"},
	{"CI secret reference", "  token: ${{ secrets.CODECOV_TOKEN }}\n"},
	{"token audience", "TOKEN_AUDIENCE=sts.amazonaws.com\n"},
	{"token regexp", "const tokenRegex = /^ghp_[A-Za-z0-9]{36}$/;\n"},
	{"certificate URL", "auth_provider_x509_cert_url: https://www.googleapis.com/oauth2/v1/certs\n"},
	{"JWT algorithm", "JWT_SECRET_ALGORITHM=HS256\n"},
	{"Ansible vault", "password: !vault |\n          $ANSIBLE_VAULT;1.1;AES256\n"},
	{"key name", "NEXT_PUBLIC_API_KEY_NAME=maps\n"},
	{"key id", "HMAC_KEY_ID=key-2024-06\n"},
	{"k8s secret name", "secretName: tls-wildcard-example-com\n"},
	{"key from the environment", "apiKey: process.env.MAPS_API_KEY,\n"},
	{"password policy", "\"passwordPolicy\": {\"minLength\": 12, \"requireSymbols\": true},\n"},
	{"cookie name", "SESSION_TOKEN_COOKIE=__Host-session\n"},
	{"key file", "ANTHROPIC_API_KEY_FILE=/run/secrets/anthropic\n"},
	{"key path", "PRIVATE_KEY_PATH=./certs/server.key\n"},
}

func TestHeldOutBenign(t *testing.T) {
	s := mustNew(t, Options{Enabled: true})
	for _, tt := range heldOutBenign {
		t.Run(tt.name, func(t *testing.T) {
			if got, counts := s.Redact(tt.in); got != tt.in || len(counts) != 0 {
				t.Errorf("Redact changed the text:\n in %q\nout %q\ncounts %v", tt.in, got, counts)
			}
		})
	}
}

// TestPrefixFamiliesBeyondGitleaks: keys of the families SPEC §9 names by
// prefix that gitleaks' rules miss are redacted by this package's own, and
// what only looks like them survives.
func TestPrefixFamiliesBeyondGitleaks(t *testing.T) {
	awsID, openAILegacy, openAIProject := gapTokens()
	gitleaksRE := func(id string) *regexp.Regexp {
		for _, g := range gitleaksRules {
			if g.ID == id {
				return regexp.MustCompile(g.Regex)
			}
		}
		t.Fatalf("no gitleaks rule %s", id)
		return nil
	}
	s := mustNew(t, Options{Enabled: true})
	gaps := []struct{ name, key, gitleaksRule, rule string }{
		{"AWS key id with 0, 1, 8 and 9", awsID, "aws-access-token", "aws-access-key-id"},
		{"legacy OpenAI key without T3BlbkFJ", openAILegacy, "openai-api-key", "openai-key"},
		{"short-format OpenAI project key", openAIProject, "openai-api-key", "openai-key"},
	}
	for _, tt := range gaps {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.ContainsAny(tt.key, "0189") && tt.rule == "aws-access-key-id" {
				t.Fatalf("test bug: %s has none of the digits gitleaks leaves out", tt.key)
			}
			if gitleaksRE(tt.gitleaksRule).MatchString(tt.key) {
				t.Fatalf("gitleaks' %s matches %s: no gap to test", tt.gitleaksRule, tt.key)
			}
			for _, ctx := range []string{"%s", "export KEY=%s\n", `{"key": "%s"}`, "use %s, then retry."} {
				in := fmt.Sprintf(ctx, tt.key)
				want := strings.Replace(in, tt.key, marker(tt.rule), 1)
				if got, counts := s.Redact(in); got != want || !equalCounts(counts, map[string]int{tt.rule: 1}) {
					t.Errorf("Redact(%q)\n got %q %v\nwant %q", in, got, counts, want)
				}
			}
		})
	}
	benign := []string{
		"commit 3f786850e387550fdab836ed7e6dc881de23001b",
		"tree e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		"5d41402abc4b2a76b9719d911017c592  hello.txt",
		"uuid 123e4567-e89b-12d3-a456-426614174000",
		"pip install scikit-learn; import sklearn as sk-learn",
		"task-17 blocks task-18",
		"risk-assessment-template and desk-booking-service",
		"AKIAExample is not a key id, nor is AKIA alone",
		"ASIA and AKIA are the prefixes of AWS key ids",
		"sk-ant- and sk-proj- are key prefixes",
		"xoxb- tokens belong to bots",
	}
	for _, in := range benign {
		if got, counts := s.Redact(in); got != in || len(counts) != 0 {
			t.Errorf("Redact(%q) = %q %v; want it unchanged", in, got, counts)
		}
	}
}

func TestSecretsAtTextEdges(t *testing.T) {
	s := mustNew(t, Options{Enabled: true})
	tok := "ghp_" + fake("edge", alnum, 36)
	key := pemBlock("edge-key", "OPENSSH PRIVATE KEY", 400, nil, "", "\n")
	tests := []struct{ name, in, want string }{
		{"token is the whole text", tok, marker("github-pat")},
		{"token at start", tok + "\nrest", marker("github-pat") + "\nrest"},
		{"token at end", "start\n" + tok, "start\n" + marker("github-pat")},
		{"token at end after newline", "start\n" + tok + "\n", "start\n" + marker("github-pat") + "\n"},
		{"key is the whole text", key, marker("private-key")},
		{"key at start", key + "\nafter", marker("private-key") + "\nafter"},
		{"key at end", "before\n" + key, "before\n" + marker("private-key")},
		{"two secrets touching", tok + tok, marker("github-pat") + marker("github-pat")},
		{"two secrets on one line", tok + " " + tok, marker("github-pat") + " " + marker("github-pat")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := s.Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPrivateKeyBlocks(t *testing.T) {
	s := mustNew(t, Options{Enabled: true})
	rsa := pemBlock("trunc", "RSA PRIVATE KEY", 900, nil, "", "\n")
	cut := rsa[:strings.Index(rsa, "-----END")] // BEGIN and body, END lost
	lines := strings.Split(strings.TrimSuffix(cut, "\n"), "\n")
	midLine := strings.Join(lines[:5], "\n") + "\n" + lines[5][:30]
	other := pemBlock("second", "EC PRIVATE KEY", 120, nil, "", "\n")
	m := marker("private-key")
	tests := []struct{ name, in, want string }{
		{"truncated, then a log line", cut + "FAIL: TestDeploy (0.31s)\n", m + "\nFAIL: TestDeploy (0.31s)\n"},
		{"truncated at end of text", "loaded key:\n" + cut, "loaded key:\n" + m + "\n"},
		{"truncated mid-line at end of text", midLine, m},
		{"truncated mid-line then marker", midLine + "[truncated]", m + "[truncated]"},
		{"truncated, then blank line and prose", cut + "\nThe deploy step printed the key above.", m + "\n\nThe deploy step printed the key above."},
		{"truncated, then indented prose", cut + "  at deploy.go:12", m + "\n  at deploy.go:12"},
		{"two blocks, prose between survives", rsa + "\n\nand then, later {x}:\n" + other, m + "\n\nand then, later {x}:\n" + m},
		{"block in a Go raw string", "const key = `" + other + "`\n", "const key = `" + m + "`\n"},
		{"block with CRLF and indentation", "  " + strings.ReplaceAll(other, "\n", "\r\n  ") + "\r\n", "  " + m + "\r\n"},
		{"concatenated Go string", "key := \"-----BEGIN EC PRIVATE KEY-----\\n\" +\n\t\"" + fake("cat1", b64Std, 64) + "\\n\" +\n\t\"" + fake("cat2", b64Std, 40) + "\\n\" +\n\t\"-----END EC PRIVATE KEY-----\\n\"\n",
			"key := \"" + m + "\\n\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := s.Redact(tt.in)
			if got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestEnvironmentValues(t *testing.T) {
	gh := fake("env-gh", alnum, 24)
	api := fake("env-api", alnum, 32)
	pw := "hunter2-" + fake("env-pw", alnum, 6)
	cs := fake("env-cs", alnum, 16)
	s := mustNew(t, Options{Enabled: true, Environ: []string{
		"GITHUB_TOKEN=" + gh,
		"my_api_key=" + api,
		"DB_PASSWORD=" + pw,
		"OAUTH_CLIENT_SECRET=" + cs,
		"ALSO_A_TOKEN=" + gh, // same value: reported under the first name
		"SHORT_TOKEN=abc1234",
		"HOME=/home/runner/some/long/path",
		"EDITOR=nvim-qt-editor",
		"STRIPE_PUBLISHABLE_KEY=pk_live_0123456789",
		"SSH_PUBLIC_KEY=ssh-ed25519-AAAA",
		"=C:=C:\\Users",
		"NOEQUALSSIGN",
	}})
	in := "clone with " + gh + "\n" +
		"api key " + api + " and pw " + pw + ".\n" +
		"the client secret is " + cs + "\n" +
		"short abc1234, home /home/runner/some/long/path, editor nvim-qt-editor, pk_live_0123456789, ssh-ed25519-AAAA\n" +
		gh
	want := "clone with " + marker("env:ALSO_A_TOKEN") + "\n" +
		"api key " + marker("env:my_api_key") + " and pw " + marker("env:DB_PASSWORD") + ".\n" +
		"the client secret is " + marker("env:OAUTH_CLIENT_SECRET") + "\n" +
		"short abc1234, home /home/runner/some/long/path, editor nvim-qt-editor, pk_live_0123456789, ssh-ed25519-AAAA\n" +
		marker("env:ALSO_A_TOKEN")
	got, counts := s.Redact(in)
	if got != want {
		t.Errorf("Redact\n got %q\nwant %q", got, want)
	}
	wantCounts := map[string]int{"env:ALSO_A_TOKEN": 2, "env:my_api_key": 1, "env:DB_PASSWORD": 1, "env:OAUTH_CLIENT_SECRET": 1}
	if !equalCounts(counts, wantCounts) {
		t.Errorf("counts = %v, want %v", counts, wantCounts)
	}
}

func TestSecretEnvName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"GITHUB_TOKEN", true},
		{"OPENAI_API_KEY", true},
		{"AWS_SECRET_ACCESS_KEY", true},
		{"CLIENT_SECRET", true},
		{"PGPASSWORD", true},
		{"DB_PASSWORD_FILE", true},
		{"MYSQL_PASSWD", true},
		{"lower_case_token", true},
		{"AWS_ACCESS_KEY_ID", false},
		{"TOKENIZER_PATH", false},
		{"KEYBOARD", false},
		{"HOME", false},
		{"STRIPE_PUBLISHABLE_KEY", false},
		{"DEPLOY_PUBLIC_KEY", false},
	}
	for _, tt := range tests {
		if got := SecretEnvName(tt.name); got != tt.want {
			t.Errorf("SecretEnvName(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestAllowList(t *testing.T) {
	tok := "ghp_" + fake("allow", alnum, 36)
	other := "ghp_" + fake("allow-other", alnum, 36)
	dsn := "postgres://app:devpass123@localhost:5432/app"
	s := mustNew(t, Options{Enabled: true, Allow: []string{tok, dsn, "", other[:10]}, Environ: []string{"CI_TOKEN=" + tok}})
	tests := []struct{ name, in, want string }{
		{"allowed token survives (and its env match)", "use " + tok + " in tests", "use " + tok + " in tests"},
		{"password inside an allowed string survives", "DSN " + dsn, "DSN " + dsn},
		{"same password elsewhere is redacted", "postgres://app:devpass123@db.prod:5432/app", "postgres://app:" + marker("url-password") + "@db.prod:5432/app"},
		{"allowed literal covering part of a match does not protect it", other, marker("github-pat")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := s.Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestUserRules(t *testing.T) {
	s := mustNew(t, Options{Enabled: true, Extra: []UserRule{
		{Name: "internal-ticket-key", Regex: `ITK-[0-9]{6}-[A-Z]{4}`},
		{Name: "session.cookie", Regex: `session=(?P<secret>[0-9a-f]{16})`},
		{Name: "multi_line", Regex: `(?s)BEGIN-SECRET.*?END-SECRET`},
	}})
	in := "ticket ITK-123456-ABCD; cookie session=0123456789abcdef; x\nBEGIN-SECRET\nabc\nEND-SECRET\n"
	want := "ticket " + marker("internal-ticket-key") + "; cookie session=" + marker("session.cookie") + "; x\n" + marker("multi_line") + "\n"
	got, counts := s.Redact(in)
	if got != want {
		t.Errorf("Redact\n got %q\nwant %q", got, want)
	}
	if !equalCounts(counts, map[string]int{"internal-ticket-key": 1, "session.cookie": 1, "multi_line": 1}) {
		t.Errorf("counts = %v", counts)
	}
}

func TestUserRuleErrors(t *testing.T) {
	tests := []struct {
		name  string
		rules []UserRule
		want  []string // substrings of the error
	}{
		{"bad regex", []UserRule{{Name: "broken", Regex: `token-(`}}, []string{`scrub rule "broken"`, "missing closing )"}},
		{"lookahead", []UserRule{{Name: "perlish", Regex: `foo(?=bar)`}}, []string{`scrub rule "perlish"`, "invalid or unsupported Perl syntax"}},
		{"empty name", []UserRule{{Name: "ok", Regex: "a+"}, {Name: "", Regex: "b+"}}, []string{"scrub rule #2", "name is empty"}},
		{"bad name", []UserRule{{Name: "has space", Regex: "a+"}}, []string{`scrub rule "has space"`, "name must be"}},
		{"built-in name", []UserRule{{Name: "jwt", Regex: "a+"}}, []string{`scrub rule "jwt"`, "already used"}},
		{"repeated name", []UserRule{{Name: "x", Regex: "a+"}, {Name: "x", Regex: "b+"}}, []string{`scrub rule "x"`, "already used"}},
		{"empty regex", []UserRule{{Name: "blank", Regex: ""}}, []string{`scrub rule "blank"`, "regex is empty"}},
		{"matches empty", []UserRule{{Name: "star", Regex: "a*"}}, []string{`scrub rule "star"`, "matches the empty string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(Options{Enabled: true, Extra: tt.rules})
			if err == nil {
				t.Fatal("New succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	// A disabled scrubber still refuses a broken configuration.
	if _, err := New(Options{Enabled: false, Extra: []UserRule{{Name: "broken", Regex: "("}}}); err == nil {
		t.Error("New with Enabled=false accepted a broken rule")
	}
}

func TestDisabled(t *testing.T) {
	in := "ghp_" + fake("disabled", alnum, 36) + "\n" + pemBlock("disabled", "RSA PRIVATE KEY", 300, nil, "", "\n")
	s := mustNew(t, Options{Enabled: false, Environ: []string{"GITHUB_TOKEN=" + in[:20]}})
	got, counts := s.Redact(in)
	if got != in || counts == nil || len(counts) != 0 {
		t.Errorf("disabled Redact = %q, %v; want the input and an empty map", got, counts)
	}
	var nilScrubber *Scrubber
	if got, counts := nilScrubber.Redact(in); got != in || len(counts) != 0 {
		t.Errorf("nil Redact = %q, %v; want the input", got, counts)
	}
}

func TestOverlapsMergeUnderTheFirstRule(t *testing.T) {
	tok := "ghp_" + fake("overlap", alnum, 36)
	deploy := fake("overlap-deploy", alnum, 24)
	s := mustNew(t, Options{Enabled: true, Environ: []string{"GH_TOKEN=" + tok[:20], "DEPLOY_TOKEN=" + deploy}})
	tests := []struct {
		name, in, want string
		counts         map[string]int
	}{
		{"env value inside a token", "x " + tok + " y", "x " + marker("github-pat") + " y", map[string]int{"github-pat": 1}},
		{"token in an assignment", "GITHUB_TOKEN=\"" + tok + "\"", "GITHUB_TOKEN=" + marker("github-pat"), map[string]int{"github-pat": 1}},
		{"token as a url password", "https://x-access-token:" + tok + "@github.com/o/r.git", "https://x-access-token:" + marker("github-pat") + "@github.com/o/r.git", map[string]int{"github-pat": 1}},
		// An environment value is named more precisely than by gitleaks'
		// generic rule.
		{"env value under a key name", "deploy token: " + deploy, "deploy token: " + marker("env:DEPLOY_TOKEN"), map[string]int{"env:DEPLOY_TOKEN": 1}},
		{"generic key", "deploy token: " + fake("overlap-other", alnum, 24), "deploy token: " + marker("generic-api-key"), map[string]int{"generic-api-key": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, counts := s.Redact(tt.in)
			if got != tt.want || !equalCounts(counts, tt.counts) {
				t.Errorf("Redact(%q)\n got %q %v\nwant %q %v", tt.in, got, counts, tt.want, tt.counts)
			}
		})
	}
}

func TestMarkersAreLeftAlone(t *testing.T) {
	s := mustNew(t, Options{Enabled: true, Environ: []string{"X_TOKEN=REDACTED:github"}})
	tok := "ghp_" + fake("markers", alnum, 36)
	tests := []struct{ name, in, want string }{
		{"env value inside a marker", "[REDACTED:github-pat]", "[REDACTED:github-pat]"},
		{"url password that is a marker", "https://u:[REDACTED:url-password]@host", "https://u:[REDACTED:url-password]@host"},
		{"assignment of a marker", "DB_PASSWORD=[REDACTED:env:DB_PASSWORD]", "DB_PASSWORD=[REDACTED:env:DB_PASSWORD]"},
		{"new secret beside a marker", "[REDACTED:jwt]" + tok, "[REDACTED:jwt]" + marker("github-pat")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, counts := s.Redact(tt.in)
			if got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q (counts %v)", tt.in, got, tt.want, counts)
			}
		})
	}
}

func TestIdempotentOnCorpus(t *testing.T) {
	s := mustNew(t, Options{Enabled: true, Environ: benchEnviron()})
	in := benchPrompt(40 << 10)
	once, counts := s.Redact(in)
	if len(counts) == 0 {
		t.Fatal("the corpus has secrets but nothing was redacted")
	}
	twice, again := s.Redact(once)
	if twice != once || len(again) != 0 {
		t.Errorf("second Redact changed the text (counts %v)", again)
	}
	for _, sec := range benchSecrets() {
		if strings.Contains(once, sec) {
			t.Errorf("secret %.12q... survived", sec)
		}
	}
}

// TestCountsFollowTheResult covers a later pass absorbing a marker the same
// call wrote: the rule name inside the first marker completes a second match.
func TestCountsFollowTheResult(t *testing.T) {
	s := mustNew(t, Options{Enabled: true, Extra: []UserRule{{Name: "fuzz-rule", Regex: `(?s)zz.{0,40}?zz`}}})
	got, counts := s.Redact("zzzzzz")
	if got != marker("fuzz-rule") || !equalCounts(counts, map[string]int{"fuzz-rule": 1}) {
		t.Errorf("Redact(%q) = %q, %v; want %q, fuzz-rule: 1", "zzzzzz", got, counts, marker("fuzz-rule"))
	}
}

// TestEncodedSecrets covers secrets that reach a prompt encoded, as gitleaks
// finds them: the encoded text is redacted under the rule that found the
// secret in the decoded text.
func TestEncodedSecrets(t *testing.T) {
	s := mustNew(t, Options{Enabled: true})
	key := pemBlock("b64-key", "RSA PRIVATE KEY", 600, nil, "", "\n")
	b64 := func(v string) string { return base64.StdEncoding.EncodeToString([]byte(v)) }
	tok := "ghp_" + fake("hex-ghp", alnum, 36)
	assign := "DB_PASSWORD=" + fake("b64-assign", alnum, 20) + "\n"
	tests := []struct{ name, in, want string }{
		{"base64 of a private key", "tls:\n  key: " + b64(key) + "\n", "tls:\n  key: " + marker("private-key") + "\n"},
		{"base64 of an assignment", "data:\n  env: " + b64(assign), "data:\n  env: " + marker("secret-assignment")},
		{"base64 twice", "blob " + b64(b64(assign)) + " end", "blob " + marker("secret-assignment") + " end"},
		{"hex", "payload=" + hex.EncodeToString([]byte(tok)), "payload=" + marker("github-pat")},
		// A percent-encoded run reaches from the first %XX to the last on
		// its line, and is redacted whole.
		{"percent-encoding", "https://example.com/cb?token%3D" + tok + "%26x%3D1", "https://example.com/cb?token" + marker("github-pat") + "1"},
		{"percent-encoded key name", "q=password%3A%20" + fake("pct", alnum, 12) + "\n", "q=password%3A%20" + marker("secret-assignment") + "\n"},
		{"decoded text without a secret", "motd: " + b64("welcome to the build machine, have a nice day"), "motd: " + b64("welcome to the build machine, have a nice day")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := s.Redact(tt.in)
			if got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestAssignmentOnAnyLine: an assignment is redacted on the first line of a
// text (a goal, a title, the tree summary) as on any other.
func TestAssignmentOnAnyLine(t *testing.T) {
	s := mustNew(t, Options{Enabled: true})
	pw := fake("any-line", alnum, 16)
	for _, line := range []string{
		"DB_PASSWORD=" + pw,
		"title: fix the login with DB_PASSWORD=" + pw,
		"- [ ] a: deploy (DB_PASSWORD=" + pw + ")",
		"goal: export DB_PASSWORD=" + pw + " before the tests",
	} {
		for _, in := range []string{line, line + "\nsecond line", "first line\n" + line, "# Goal\n\n" + line + "\n"} {
			out, counts := s.Redact(in)
			if strings.Contains(out, pw) || counts["secret-assignment"] != 1 {
				t.Errorf("Redact(%q) = %q, %v", in, out, counts)
			}
		}
	}
}

// TestHashesSurviveEveryKeyword: commit hashes, digests, go.sum lines and
// UUIDs survive in a text that holds the keyword of every rule.
func TestHashesSurviveEveryKeyword(t *testing.T) {
	s := mustNew(t, Options{Enabled: true})
	var kws []string
	for _, r := range builtinRules() {
		kws = append(kws, r.keywords...)
	}
	hashes := "commit 3f786850e387550fdab836ed7e6dc881de23001b\nMerge: 1b2c3d4 5e6f7a8\n" +
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  empty.txt\n" +
		"image: golang@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n" +
		"github.com/spf13/cobra v1.10.2 h1:HPRbJPEdfJL3xnKcLD2GcFv7ZmbMYIKBRbL1z0aSsXg=\n" +
		"github.com/spf13/cobra v1.10.2/go.mod h1:7C1pvHqHw5A4vrJfjNwvOdzYu0Gml16OCs2GRiTUUS0=\n" +
		"request 0f8fad5b-d9cb-469f-a165-70867728950e failed; trace 7c9e6679-7425-40de-944b-e07fc1f90ae7\n" +
		"a94a8fe5ccb19ba61c4c0873d391e987982fbbd3 refs/heads/main\n"
	for _, in := range []string{strings.Join(kws, " ") + "\n" + hashes, hashes + strings.Join(kws, "\n")} {
		out, counts := s.Redact(in)
		if !strings.Contains(out, hashes) {
			t.Errorf("hashes changed (%v):\n%s", counts, out)
		}
	}
}

// TestMarkersHoldNoKeywords: a rule's name inside a marker does not switch
// on rules that need a keyword. gitleaks' sourcegraph rule takes any 40 hex
// digits for a token once "sourcegraph" appears in a text.
func TestMarkersHoldNoKeywords(t *testing.T) {
	s := mustNew(t, Options{Enabled: true})
	in := marker("sourcegraph-access-token") + "\nchecksum 6d2FabeB6ADd229Bc199FabA28fD3efb57dF0bD3\n"
	if out, counts := s.Redact(in); out != in {
		t.Errorf("Redact(%q) = %q, %v", in, out, counts)
	}
	in = "sourcegraph: 6d2FabeB6ADd229Bc199FabA28fD3efb57dF0bD3"
	if out, _ := s.Redact(in); out != "sourcegraph: "+marker("sourcegraph-access-token") {
		t.Errorf("Redact(%q) = %q", in, out)
	}
}

// TestSecretRedactedEverywhere: a value found as a secret once is redacted
// wherever else it appears.
func TestSecretRedactedEverywhere(t *testing.T) {
	s := mustNew(t, Options{Enabled: true})
	pw := fake("everywhere", alnum, 16)
	in := "DB_PASSWORD=" + pw + "\nlog: connecting with " + pw + " failed\n"
	want := "DB_PASSWORD=" + marker("secret-assignment") + "\nlog: connecting with " + marker("secret-assignment") + " failed\n"
	if out, counts := s.Redact(in); out != want || counts["secret-assignment"] != 2 {
		t.Errorf("Redact(%q)\n got %q %v\nwant %q", in, out, counts, want)
	}
}
