// The cross-language scenario (client/README.md): creates a scene, upserts five bodies in one
// call, runs five unary queries and prints one JSON object per query (a..e), then deletes the
// scene. The C++, Python, Node and Java programs print the same lines for the same server.
// Floats print as the shortest decimal that reads back as the float32 received, in the
// notation C++'s std::to_chars picks (number); uint64 values as received. The five programs
// print the same bytes.
//
//	collide-scenario-go --address 127.0.0.1:50051 --scene scenario-go
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"strconv"
	"strings"

	"collide.dev/collide"
	pb "collide.dev/collide/collidepb"
)

func bodies() []*pb.Body {
	box := collide.NewBody(2, collide.BoxShape(1, 0.5, 2),
		collide.Posed(collide.V(5, 0, 0), collide.Q(0, 0, 0.25881904, 0.96592583)))
	small := collide.NewBody(4, collide.SphereShape(0.5), collide.At(0, 5, 0))
	small.Category = collide.U32(2)
	static := collide.NewBody(5, collide.BoxShape(0.5, 0.5, 0.5), collide.At(-4, 0, 0))
	static.Kind = pb.BodyKind_BODY_KIND_STATIC
	return []*pb.Body{
		collide.NewBody(1, collide.SphereShape(1), collide.At(0, 0, 0)),
		box,
		collide.NewBody(3, collide.CapsuleShape(0.5, 1), collide.At(10, 0, 0)),
		small,
		static,
	}
}

// number is the shortest decimal that reads back as f, as C++'s std::to_chars prints it: fixed,
// or d.ddde+XX when that is shorter (a tie: fixed); the fixed form of an integer has all its
// digits (6528615424, not 6528615400).
func number(f float32) string {
	sign := ""
	if math.Signbit(float64(f)) {
		sign, f = "-", -f
	}
	if f == 0 {
		return sign + "0"
	}
	// d.ddde±X: the shortest digits and the exponent of the first.
	e := strconv.FormatFloat(float64(f), 'e', -1, 32)
	at := strings.IndexByte(e, 'e')
	mantissa := e[:at]
	power, _ := strconv.Atoi(e[at+1:])
	digits := strings.Replace(mantissa, ".", "", 1)
	exponent := power - (len(digits) - 1) // f = digits x 10^exponent
	var fixed string
	switch n := len(digits); {
	case exponent >= 0:
		fixed = strconv.FormatFloat(float64(f), 'f', 0, 64)
	case -exponent < n:
		fixed = digits[:n+exponent] + "." + digits[n+exponent:]
	default:
		fixed = "0." + strings.Repeat("0", -exponent-n) + digits
	}
	powerSign := "+"
	if power < 0 {
		powerSign, power = "-", -power
	}
	scientific := fmt.Sprintf("%se%s%02d", mantissa, powerSign, power)
	if len(fixed) <= len(scientific) {
		return sign + fixed
	}
	return sign + scientific
}

// printNumbers prints each float32 of stdin (its bits in hex, one a line) as number does.
func printNumbers() {
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		bits, err := strconv.ParseUint(line, 16, 32)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Fprintln(out, number(math.Float32frombits(uint32(bits))))
	}
}

func vec(v *pb.Vec3) string {
	return "[" + number(v.GetX()) + ", " + number(v.GetY()) + ", " + number(v.GetZ()) + "]"
}

// line is one output line, with the keys in the order of the other languages' programs.
func line(name string, r *pb.QueryResponse) string {
	hits := make([]string, 0, len(r.Hits))
	for _, h := range r.Hits {
		hits = append(hits, fmt.Sprintf(
			`{"body_id": %d, "distance": %s, "point": %s, "normal": %s, "depth": %s, "start_overlapping": %s}`,
			h.BodyId, number(h.Distance), vec(h.Point), vec(h.Normal),
			number(h.Depth), strconv.FormatBool(h.StartOverlapping)))
	}
	return fmt.Sprintf(`{"query": %q, "version": %d, "hits": [%s]}`, name, r.Version, strings.Join(hits, ", "))
}

func main() {
	address := flag.String("address", "127.0.0.1:50051", "the server's host:port")
	scene := flag.String("scene", "scenario", "the scene to create and delete")
	numbers := flag.Bool("numbers", false, "instead of the scenario: print each float32 of stdin "+
		"(its bits, 8 hex digits a line) as the scenario prints numbers")
	flag.Parse()
	if *numbers {
		printNumbers()
		return
	}
	ctx := context.Background()
	client, err := collide.Dial(*address, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	if _, err := client.CreateScene(ctx, *scene, nil); err != nil {
		log.Fatal(err)
	}
	run := func() error {
		if _, err := client.UpsertBodies(ctx, *scene, bodies()...); err != nil {
			return err
		}
		type answer struct {
			name string
			call func() (*pb.QueryResponse, error)
		}
		answers := []answer{
			{"a", func() (*pb.QueryResponse, error) {
				return client.Raycast(ctx, &pb.RaycastRequest{Scene: *scene, Mode: pb.Mode_MODE_ALL,
					Ray: collide.Ray(collide.V(-10, 0, 0), collide.V(1, 0, 0), 100)})
			}},
			{"b", func() (*pb.QueryResponse, error) {
				return client.Raycast(ctx, &pb.RaycastRequest{Scene: *scene, Mode: pb.Mode_MODE_CLOSEST,
					Ray:    collide.Ray(collide.V(0, -10, 0), collide.V(0, 1, 0), 100),
					Filter: &pb.Filter{Mask: collide.U32(2)}})
			}},
			{"c", func() (*pb.QueryResponse, error) {
				return client.SphereCast(ctx, &pb.SphereCastRequest{Scene: *scene, Mode: pb.Mode_MODE_ALL,
					Cast: collide.Cast(collide.V(0, 0, -10), collide.V(0, 0, 1), 20, 0.25)})
			}},
			{"d", func() (*pb.QueryResponse, error) {
				return client.Overlap(ctx, &pb.OverlapRequest{Scene: *scene, Mode: pb.Mode_MODE_ALL, Detail: true,
					Overlap: &pb.Overlap{Shape: collide.SphereShape(1.5), Pose: collide.At(4.5, 0.5, 0)}})
			}},
			{"e", func() (*pb.QueryResponse, error) {
				return client.SphereCast(ctx, &pb.SphereCastRequest{Scene: *scene, Mode: pb.Mode_MODE_ALL,
					Cast: collide.Cast(collide.V(-10, 0.8, 0), collide.V(1, 0, 0), 30, 0.4)})
			}},
		}
		for _, a := range answers {
			r, err := a.call()
			if err != nil {
				return err
			}
			fmt.Println(line(a.name, r))
		}
		return nil
	}
	err = run()
	if derr := client.DeleteScene(ctx, *scene); err == nil {
		err = derr
	}
	if err != nil {
		log.Fatal(err)
	}
}
