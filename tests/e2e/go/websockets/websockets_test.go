// AMQP over WebSockets with the Go SDK: ClientOptions.NewWebSocketConn dialing with
// github.com/coder/websocket as the SDK's example does. The SDK hands the function
// args.Host = wss://<Endpoint host:port>/$servicebus/websocket (the AMQP port: sbemu answers
// TLS and WebSockets there); a user may also dial ws:// on the HTTP port. Subprotocols: the
// SDK's example asks for "amqp", the other SDKs for "AMQPWSB10".
package websockets

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/coder/websocket"
	"sbemu/tests/e2e/go/internal/harness"
)

func TestMain(m *testing.M) {
	harness.Main(m, harness.Options{Name: "websockets", Queues: []harness.Queue{{Name: "wss"}, {Name: "ws"}, {Name: "amqpsub"}, {Name: "wsbig"}},
		Args: []string{"--max-message-size", "1m"}})
}

// dialer returns a NewWebSocketConn that records the URL the SDK asked for and dials url(asked).
func dialer(t *testing.T, e *harness.Emulator, subprotocol string, url func(asked string) string, asked *[]string) func(context.Context, azservicebus.NewWebSocketConnArgs) (net.Conn, error) {
	httpClient := &http.Client{Transport: &http.Transport{TLSClientConfig: e.TLSConfig(t)}}
	return func(ctx context.Context, args azservicebus.NewWebSocketConnArgs) (net.Conn, error) {
		*asked = append(*asked, args.Host)
		opts := &websocket.DialOptions{Subprotocols: []string{subprotocol}, HTTPClient: httpClient}
		wssConn, resp, err := websocket.Dial(ctx, url(args.Host), opts)
		if err != nil {
			return nil, err
		}
		if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != subprotocol {
			wssConn.Close(websocket.StatusProtocolError, "subprotocol")
			return nil, fmt.Errorf("the server chose subprotocol %q, asked for %q", got, subprotocol)
		}
		// As the SDK's example: a net.Conn over binary messages, coder/websocket's default read
		// limit (32 KiB a message) kept.
		return websocket.NetConn(ctx, wssConn, websocket.MessageBinary), nil
	}
}

func roundTrip(t *testing.T, c *azservicebus.Client, q string, body []byte) {
	t.Helper()
	ctx := harness.Ctx(t, 60*time.Second)
	s, err := c.NewSender(q, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SendMessage(ctx, &azservicebus.Message{Body: body, MessageID: harness.Ptr(q + "-1")}, nil); err != nil {
		t.Fatalf("SendMessage over WebSockets: %v", err)
	}
	r, err := c.NewReceiverForQueue(q, nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := r.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("ReceiveMessages over WebSockets: %d, %v", len(msgs), err)
	}
	if !bytes.Equal(msgs[0].Body, body) {
		t.Fatalf("body of %d bytes came back as %d", len(body), len(msgs[0].Body))
	}
	if err := r.CompleteMessage(ctx, msgs[0], nil); err != nil {
		t.Fatalf("CompleteMessage: %v", err)
	}
	peeked, err := r.PeekMessages(ctx, 5, nil)
	if err != nil || len(peeked) != 0 {
		t.Fatalf("peek after complete: %d, %v", len(peeked), err)
	}
}

func newClient(t *testing.T, e *harness.Emulator, fn func(context.Context, azservicebus.NewWebSocketConnArgs) (net.Conn, error)) *azservicebus.Client {
	return e.Client(t, &azservicebus.ClientOptions{NewWebSocketConn: fn, RetryOptions: harness.FastRetries})
}

// The URL the SDK gives, as it is: wss:// on the AMQP port, subprotocol AMQPWSB10.
func TestWSSOnAMQPPort(t *testing.T) {
	e := harness.Get(t)
	var asked []string
	c := newClient(t, e, dialer(t, e, "AMQPWSB10", func(u string) string { return u }, &asked))
	roundTrip(t, c, "wss", []byte("over wss"))
	want := fmt.Sprintf("wss://localhost:%d/$servicebus/websocket", e.AMQPPort)
	if len(asked) == 0 || asked[0] != want {
		t.Errorf("the SDK asked for %v, want %s", asked, want)
	}
}

// The SDK's own example asks for the subprotocol "amqp".
func TestSubprotocolAMQPAsInTheSDKExample(t *testing.T) {
	e := harness.Get(t)
	var asked []string
	c := newClient(t, e, dialer(t, e, "amqp", func(u string) string { return u }, &asked))
	roundTrip(t, c, "amqpsub", []byte("subprotocol amqp"))
}

// Plain ws:// on the HTTP port: the user rewrites the URL the SDK gives.
func TestWSOnHTTPPort(t *testing.T) {
	e := harness.Get(t)
	var asked []string
	toHTTP := func(u string) string {
		return strings.Replace(u, fmt.Sprintf("wss://localhost:%d", e.AMQPPort), fmt.Sprintf("ws://localhost:%d", e.HTTPPort), 1)
	}
	c := newClient(t, e, dialer(t, e, "AMQPWSB10", toHTTP, &asked))
	roundTrip(t, c, "ws", []byte("over ws"))
}

// A 900 KB message (many AMQP frames, many WebSocket messages) both ways.
func TestLargeMessageOverWebSockets(t *testing.T) {
	e := harness.Get(t)
	var asked []string
	c := newClient(t, e, dialer(t, e, "AMQPWSB10", func(u string) string { return u }, &asked))
	roundTrip(t, c, "wsbig", bytes.Repeat([]byte("0123456789"), 90*1024))
}
