// Package harness starts a real sbemu for a test package: a temp data dir (its embedded
// PostgreSQL lives there), free ports, a Config.json naming the entities the package needs;
// it waits for GET /health = 200, hands out the emulator connection string with only the
// port added, and stops the emulator with SIGTERM expecting exit 0 within 15 s. The
// emulator's stdout and stderr go to <tmp>/sbemu.log, printed when something failed.
//
// Each test package has one emulator, started by its TestMain through Main, so every test
// file (one per package) gets a fresh one. Environment: SBEMU_BIN (default
// <repo>/build/bin/sbemu), SBEMU_E2E_KEEP=1 keeps the temp dir, SBEMU_E2E_VERBOSE=1 prints
// the log even when all went well, SBEMU_E2E_ARGS adds flags to every emulator.
package harness

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	SASKeyName     = "RootManageSharedAccessKey"
	SASKey         = "SAS_KEY_VALUE"
	healthTimeout  = 30 * time.Second
	stopTimeout    = 15 * time.Second
	logTailLines   = 200
	namespaceName  = "sbemulatorns"
	defaultLockDur = "PT1M"
)

// Entity properties as the official emulator's Config.json spells them.
type Props map[string]any

type Queue struct {
	Name       string
	Properties Props
}

type Rule struct {
	Name       string
	Properties Props // {"FilterType": "Sql", "SqlFilter": {"SqlExpression": "..."}} etc.
}

type Subscription struct {
	Name       string
	Properties Props
	Rules      []Rule
}

type Topic struct {
	Name          string
	Properties    Props
	Subscriptions []Subscription
}

// Options say what the package's emulator starts with.
type Options struct {
	Name   string // for the temp dir
	Queues []Queue
	Topics []Topic
	Args   []string // extra sbemu flags
}

// Emulator is one running sbemu.
type Emulator struct {
	Opts     Options
	Tmp      string
	DataDir  string
	LogPath  string
	AMQPPort int
	HTTPPort int

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	exit   *os.ProcessState
	failed bool
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	// tests/e2e/go/internal/harness/harness.go -> repo root is five levels up
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", "..", "..", ".."))
}

// Bin is the sbemu binary the tests run.
func Bin() string {
	if b := os.Getenv("SBEMU_BIN"); b != "" {
		return b
	}
	return filepath.Join(repoRoot(), "build", "bin", "sbemu")
}

// FreePort is a TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func queueProps(p Props) Props {
	out := Props{
		"DeadLetteringOnMessageExpiration":    false,
		"DefaultMessageTimeToLive":            "PT1H",
		"DuplicateDetectionHistoryTimeWindow": "PT20S",
		"ForwardDeadLetteredMessagesTo":       "",
		"ForwardTo":                           "",
		"LockDuration":                        defaultLockDur,
		"MaxDeliveryCount":                    10,
		"RequiresDuplicateDetection":          false,
		"RequiresSession":                     false,
	}
	for k, v := range p {
		out[k] = v
	}
	return out
}

// ConfigJSON is the official-emulator Config.json for the options' entities.
func ConfigJSON(o Options) ([]byte, error) {
	queues := []any{}
	for _, q := range o.Queues {
		queues = append(queues, map[string]any{"Name": q.Name, "Properties": queueProps(q.Properties)})
	}
	topics := []any{}
	for _, t := range o.Topics {
		tp := Props{"DefaultMessageTimeToLive": "PT1H", "DuplicateDetectionHistoryTimeWindow": "PT20S", "RequiresDuplicateDetection": false}
		for k, v := range t.Properties {
			tp[k] = v
		}
		subs := []any{}
		ss := t.Subscriptions
		if ss == nil {
			ss = []Subscription{{Name: "sub"}}
		}
		for _, s := range ss {
			sp := queueProps(s.Properties)
			delete(sp, "DuplicateDetectionHistoryTimeWindow")
			delete(sp, "RequiresDuplicateDetection")
			rules := []any{}
			for _, r := range s.Rules {
				rules = append(rules, map[string]any{"Name": r.Name, "Properties": r.Properties})
			}
			subs = append(subs, map[string]any{"Name": s.Name, "Properties": sp, "Rules": rules})
		}
		topics = append(topics, map[string]any{"Name": t.Name, "Properties": tp, "Subscriptions": subs})
	}
	cfg := map[string]any{"UserConfig": map[string]any{
		"Namespaces": []any{map[string]any{"Name": namespaceName, "Queues": queues, "Topics": topics}},
		"Logging":    map[string]any{"Type": "Console"},
	}}
	return json.MarshalIndent(cfg, "", "  ")
}

// New prepares an emulator (temp dir, ports); Start runs it.
func New(o Options) (*Emulator, error) {
	slug := o.Name
	if slug == "" {
		slug = "run"
	}
	if len(slug) > 24 {
		slug = slug[:24] // psql's Unix socket path <tmp>/data/pg/run/.s.PGSQL.5432 must stay short
	}
	tmp, err := os.MkdirTemp("", "sbemu-e2e-go-"+slug+"-")
	if err != nil {
		return nil, err
	}
	// The embedded cluster runs as the postgres user, which must reach <data-dir>/pg.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	e := &Emulator{Opts: o, Tmp: tmp, DataDir: filepath.Join(tmp, "data"), LogPath: filepath.Join(tmp, "sbemu.log")}
	if e.AMQPPort, err = FreePort(); err != nil {
		return nil, err
	}
	if e.HTTPPort, err = FreePort(); err != nil {
		return nil, err
	}
	return e, nil
}

// ConnectionString is the emulator connection string, unmodified but for the port.
func (e *Emulator) ConnectionString() string {
	return ConnectionString(e.AMQPPort, SASKeyName, SASKey)
}

func ConnectionString(port int, keyName, key string) string {
	return fmt.Sprintf("Endpoint=sb://localhost:%d;SharedAccessKeyName=%s;SharedAccessKey=%s;UseDevelopmentEmulator=true;", port, keyName, key)
}

// CertPath is the self-signed certificate sbemu made for localhost (its own CA).
func (e *Emulator) CertPath() string { return filepath.Join(e.DataDir, "tls", "cert.pem") }

// CertPool trusts the emulator's certificate.
func (e *Emulator) CertPool() (*x509.CertPool, error) {
	pem, err := os.ReadFile(e.CertPath())
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no certificate in %s", e.CertPath())
	}
	return pool, nil
}

// Start writes Config.json, runs sbemu and waits until /health answers 200.
func (e *Emulator) Start() error {
	bin := Bin()
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("sbemu binary not found at %s (build it: scripts/build.sh)", bin)
	}
	cfg, err := ConfigJSON(e.Opts)
	if err != nil {
		return err
	}
	cfgPath := filepath.Join(e.Tmp, "Config.json")
	if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
		return err
	}
	args := []string{
		"--config", cfgPath,
		"--data-dir", e.DataDir,
		"--amqp-port", strconv.Itoa(e.AMQPPort),
		"--amqps-port", "0",
		"--http-port", strconv.Itoa(e.HTTPPort),
	}
	args = append(args, e.Opts.Args...)
	args = append(args, strings.Fields(os.Getenv("SBEMU_E2E_ARGS"))...)
	log, err := os.OpenFile(e.LogPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "\n=== %s %s %s\n", time.Now().UTC().Format(time.RFC3339Nano), bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	// The tests' own SBEMU_* settings must not leak into the server's flags.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SBEMU_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if err := cmd.Start(); err != nil {
		log.Close()
		return err
	}
	log.Close()
	exited := make(chan struct{})
	e.mu.Lock()
	e.cmd, e.exited, e.exit = cmd, exited, nil
	e.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		e.mu.Lock()
		e.exit = cmd.ProcessState
		e.mu.Unlock()
		close(exited)
	}()
	return e.WaitHealth(200, healthTimeout)
}

// Health is the status code of GET /health (0 when nothing answers).
func (e *Emulator) Health() (int, string) {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/health", e.HTTPPort))
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// WaitHealth polls /health until it answers status.
func (e *Emulator) WaitHealth(status int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last, body := 0, ""
	for time.Now().Before(deadline) {
		select {
		case <-e.exited:
			return fmt.Errorf("sbemu exited while waiting for /health %d (%v)", status, e.exit)
		default:
		}
		last, body = e.Health()
		if last == status {
			if status == 200 {
				var h struct{ Status string }
				if json.Unmarshal([]byte(body), &h) != nil || h.Status != "healthy" {
					return fmt.Errorf("/health answered 200 with %q", body)
				}
			}
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("/health did not answer %d within %s (last: %d %s)", status, timeout, last, body)
}

// Pid of the running sbemu.
func (e *Emulator) Pid() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cmd == nil || e.cmd.Process == nil {
		return 0
	}
	return e.cmd.Process.Pid
}

// PostmasterPid of the embedded PostgreSQL (0 if none).
func (e *Emulator) PostmasterPid() int {
	b, err := os.ReadFile(filepath.Join(e.DataDir, "pg", "data", "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	return pid
}

// Alive says whether a process exists.
func Alive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == nil
}

// Log is the emulator's whole log so far.
func (e *Emulator) Log() string {
	b, _ := os.ReadFile(e.LogPath)
	return string(b)
}

// DumpLog prints the tail of the emulator's log to stderr.
func (e *Emulator) DumpLog(reason string) {
	lines := strings.Split(e.Log(), "\n")
	from := 0
	if len(lines) > logTailLines {
		from = len(lines) - logTailLines
	}
	fmt.Fprintf(os.Stderr, "\n----- sbemu log (%s, last %d of %d lines) after: %s -----\n%s\n----- end of sbemu log -----\n",
		e.LogPath, len(lines)-from, len(lines), reason, strings.Join(lines[from:], "\n"))
}

// Stop sends SIGTERM and expects exit 0 within 15 s.
func (e *Emulator) Stop() error {
	e.mu.Lock()
	cmd, exited, exit := e.cmd, e.exited, e.exit
	e.mu.Unlock()
	if cmd == nil {
		return errors.New("sbemu is not running")
	}
	if exit != nil {
		return fmt.Errorf("sbemu had already exited before the stop (%v)", exit)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(stopTimeout):
		_ = cmd.Process.Kill()
		<-exited
		return fmt.Errorf("sbemu did not exit within %s of SIGTERM", stopTimeout)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cmd = nil
	if code := e.exit.ExitCode(); code != 0 {
		return fmt.Errorf("sbemu exited with %v after SIGTERM (expected exit 0)", e.exit)
	}
	return nil
}

// Cleanup kills what is left (sbemu, an embedded postmaster) and removes the temp dir unless
// something failed or SBEMU_E2E_KEEP is set.
func (e *Emulator) Cleanup() {
	e.mu.Lock()
	cmd, exited := e.cmd, e.exited
	e.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Kill()
		<-exited
	}
	if pid := e.PostmasterPid(); Alive(pid) {
		_ = syscall.Kill(pid, syscall.SIGQUIT)
		for i := 0; i < 100 && Alive(pid); i++ {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if os.Getenv("SBEMU_E2E_VERBOSE") != "" {
		e.DumpLog("end of run")
	}
	if !e.failed && os.Getenv("SBEMU_E2E_KEEP") == "" {
		_ = os.RemoveAll(e.Tmp)
	} else {
		fmt.Fprintf(os.Stderr, "sbemu e2e: kept %s\n", e.Tmp)
	}
}

var (
	pkgEmu      *Emulator
	pkgStartErr error
)

// Main is a test package's TestMain: one emulator for the package's tests, started before
// them and stopped (SIGTERM, exit 0) after them. A failed start fails every test (Get); a
// failed stop fails the package.
func Main(m *testing.M, o Options) {
	os.Exit(run(m, o))
}

func run(m *testing.M, o Options) int {
	e, err := New(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "sbemu e2e: %v\n", err)
		return 1
	}
	pkgEmu = e
	defer e.Cleanup()
	if err := e.Start(); err != nil {
		pkgStartErr = err
		e.failed = true
		e.DumpLog(err.Error())
	}
	code := m.Run()
	if code != 0 {
		e.failed = true
		e.DumpLog("a test failed")
	}
	if pkgStartErr == nil {
		if err := e.Stop(); err != nil {
			e.failed = true
			e.DumpLog(err.Error())
			fmt.Fprintf(os.Stderr, "sbemu e2e: FAIL: emulator stop: %v\n", err)
			return 1
		}
	}
	return code
}

// Get is the package's emulator; the test fails if it did not start.
func Get(t testing.TB) *Emulator {
	t.Helper()
	if pkgEmu == nil {
		t.Fatal("no emulator: the package's TestMain must call harness.Main")
	}
	if pkgStartErr != nil {
		t.Fatalf("the emulator did not start: %v", pkgStartErr)
	}
	return pkgEmu
}

// Ctx is a context with a deadline for one step of a test, cancelled at the test's end.
func Ctx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Eventually polls cond until it is true or the deadline passes.
func Eventually(t testing.TB, d time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(d)
	var lastErr error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		lastErr = err
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: not true within %s (last error: %v)", what, d, lastErr)
}
