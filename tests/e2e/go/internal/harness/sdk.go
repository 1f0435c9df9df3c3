package harness

import (
	"context"
	"crypto/tls"
	"errors"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

// FastRetries keep a failing test short: the SDK's defaults wait 4 s doubling to 120 s.
var FastRetries = azservicebus.RetryOptions{MaxRetries: 2, RetryDelay: 200 * time.Millisecond, MaxRetryDelay: time.Second}

// Client is an azservicebus.Client on the emulator's connection string, closed at the
// test's end. opts may be nil (FastRetries are used then).
func (e *Emulator) Client(t testing.TB, opts *azservicebus.ClientOptions) *azservicebus.Client {
	t.Helper()
	if opts == nil {
		opts = &azservicebus.ClientOptions{RetryOptions: FastRetries}
	}
	c, err := azservicebus.NewClientFromConnectionString(e.ConnectionString(), opts)
	if err != nil {
		t.Fatalf("NewClientFromConnectionString: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Close(ctx)
	})
	return c
}

// TLSConfig trusts the emulator's self-signed certificate.
func (e *Emulator) TLSConfig(t testing.TB) *tls.Config {
	t.Helper()
	pool, err := e.CertPool()
	if err != nil {
		t.Fatalf("emulator certificate: %v", err)
	}
	return &tls.Config{RootCAs: pool}
}

// Code is the azservicebus error code of err ("" if it is not an *azservicebus.Error).
func Code(err error) azservicebus.Code {
	var sbErr *azservicebus.Error
	if errors.As(err, &sbErr) {
		return sbErr.Code
	}
	return ""
}

// Ptr is a pointer to v.
func Ptr[T any](v T) *T { return &v }
