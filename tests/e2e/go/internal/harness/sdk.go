package harness

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/go-amqp"
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

// BodyForEncodedSize is a body whose message, as azservicebus encodes a Message with only
// Body and MessageID set, is exactly size bytes on the wire (what max-message-size limits).
func BodyForEncodedSize(t testing.TB, size int, messageID string) []byte {
	t.Helper()
	enc := func(n int) int {
		m := amqp.NewMessage(make([]byte, n))
		m.Properties = &amqp.MessageProperties{MessageID: messageID}
		m.Annotations = amqp.Annotations{}
		b, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	n := size - (enc(size) - size)
	for enc(n) > size {
		n--
	}
	for enc(n+1) <= size {
		n++
	}
	if enc(n) != size {
		t.Fatalf("no body gives an encoded message of exactly %d bytes (%d gives %d)", size, n, enc(n))
	}
	body := make([]byte, n)
	for i := range body {
		body[i] = byte(i * 7)
	}
	return body
}

// AdminClient is admin.NewClientFromConnectionString on the emulator's connection string, as
// a user runs it: the admin client always dials https://<Endpoint host:port>/ (it ignores
// UseDevelopmentEmulator), which is the AMQP port; sbemu answers HTTPS there with its
// self-signed certificate, so the user trusts that certificate in the client's transport.
func (e *Emulator) AdminClient(t testing.TB) *admin.Client {
	t.Helper()
	transport := &http.Transport{TLSClientConfig: e.TLSConfig(t)}
	t.Cleanup(transport.CloseIdleConnections)
	ac, err := admin.NewClientFromConnectionString(e.ConnectionString(), &admin.ClientOptions{
		ClientOptions: azcore.ClientOptions{
			Transport: &http.Client{Transport: transport, Timeout: 30 * time.Second},
			Retry:     policy.RetryOptions{MaxRetries: 1, RetryDelay: 200 * time.Millisecond},
		},
	})
	if err != nil {
		t.Fatalf("admin.NewClientFromConnectionString: %v", err)
	}
	return ac
}
