package protobuf_test

import (
	"context"
	"fmt"
	"log"

	"github.com/acemq-go/acemq"
	"github.com/acemq-go/acemq/codec/protobuf"
	pb "github.com/acemq-go/acemq/internal/testing/testpb"
)

// A service's publisher and typed consumer of a generated message (here
// acemq.test.OrderPlaced): both name the message's pointer type.
func Example() {
	ctx := context.Background()
	conn, err := acemq.Connect(ctx, "amqp://guest:guest@localhost:5672/")
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	orders, err := acemq.NewPublisher[*pb.OrderPlaced](conn, "orders", acemq.WithCodec(protobuf.Codec))
	if err != nil {
		log.Fatal(err)
	}
	if err := orders.Publish(ctx, "order.placed", &pb.OrderPlaced{OrderId: "o-1", TotalCents: 4250, Tenant: "acme"}); err != nil {
		log.Fatal(err)
	}
	_, err = acemq.Consume(ctx, conn, "orders", func(_ context.Context, m acemq.Message[*pb.OrderPlaced]) acemq.Decision {
		fmt.Println(m.Body.GetOrderId(), m.Body.GetTotalCents())
		return acemq.Accept()
	}, acemq.WithCodec(protobuf.Codec))
	if err != nil {
		log.Fatal(err)
	}
}

// The codec writes what proto.Marshal does (deterministically), and the
// family's bodies read back.
func ExampleCodec() {
	body, _ := protobuf.Codec.Marshal(&pb.OrderPlaced{OrderId: "o-1", TotalCents: 4250, Tenant: "acme"})
	var m *pb.OrderPlaced // as a typed consumer has it: the codec allocates
	err := protobuf.Codec.Unmarshal("application/x-protobuf", body, &m)
	fmt.Printf("% x\n%s %d %s %v\n", body, m.GetOrderId(), m.GetTotalCents(), m.GetTenant(), err)
	// Output:
	// 0a 03 6f 2d 31 10 9a 21 1a 04 61 63 6d 65
	// o-1 4250 acme <nil>
}
