package collide_test

import (
	"errors"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"collide.dev/collide"
	pb "collide.dev/collide/collidepb"
)

// asError is the *collide.Error err is or wraps (failing the test when there is none).
func asError(t *testing.T, err error) *collide.Error {
	t.Helper()
	var e *collide.Error
	if !errors.As(err, &e) {
		t.Fatalf("expected a *collide.Error, got %T %v", err, err)
	}
	return e
}

func expectCode(t *testing.T, err error, code codes.Code, fieldPath string) *collide.Error {
	t.Helper()
	e := asError(t, err)
	if e.Code != code || e.FieldPath != fieldPath {
		t.Fatalf("expected %v at %q, got %v at %q (%v)", code, fieldPath, e.Code, e.FieldPath, err)
	}
	if status.Code(err) != code {
		t.Fatalf("status.Code(%v) = %v, expected %v", err, status.Code(err), code)
	}
	return e
}

// raySphere is the distance along a unit direction at which a ray from o first meets the
// sphere (c, r), in float64: the oracle of the raycast test (0 when o is inside).
func raySphere(o, d [3]float64, c [3]float64, r float64) (float64, bool) {
	m := [3]float64{o[0] - c[0], o[1] - c[1], o[2] - c[2]}
	b := m[0]*d[0] + m[1]*d[1] + m[2]*d[2]
	cc := m[0]*m[0] + m[1]*m[1] + m[2]*m[2] - r*r
	if cc <= 0 {
		return 0, true
	}
	disc := b*b - cc
	if b > 0 || disc < 0 {
		return 0, false
	}
	return -b - math.Sqrt(disc), true
}

func TestScenesBodiesAndRaycastsMatchABruteForceOracle(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	const seed = 20240607
	rng := rand.New(rand.NewSource(seed))
	info, err := c.CreateScene(ctx(t), "world", &pb.SceneOptions{HistoryTicks: collide.U32(8)})
	if err != nil {
		t.Fatal(err)
	}
	if info.GetName() != "world" || info.GetOptions().GetHistoryTicks() != 8 {
		t.Fatalf("created %v", info)
	}
	type sphere struct {
		c [3]float64
		r float64
	}
	spheres := map[uint64]sphere{}
	var bodies []*pb.Body
	for id := uint64(1); id <= 200; id++ {
		sp := sphere{[3]float64{float64(float32(rng.Float64()*40 - 20)), float64(float32(rng.Float64()*40 - 20)),
			float64(float32(rng.Float64()*40 - 20))}, float64(float32(0.2 + rng.Float64()*2))}
		spheres[id] = sp
		bodies = append(bodies, collide.NewBody(id, collide.SphereShape(float32(sp.r)),
			collide.At(float32(sp.c[0]), float32(sp.c[1]), float32(sp.c[2]))))
	}
	written, err := c.UpsertBodies(ctx(t), "world", bodies...)
	if err != nil || written.Version != 1 {
		t.Fatalf("upsert: %v %v", written, err)
	}
	scenes, err := c.ListScenes(ctx(t))
	if err != nil || len(scenes) != 1 || scenes[0].GetStats().GetBodyCount() != 200 {
		t.Fatalf("list: %v %v", scenes, err)
	}
	got, err := c.GetBodies(ctx(t), "world", 7, 1000)
	if err != nil || len(got.Bodies) != 1 || got.Bodies[0].Id != 7 || len(got.MissingIds) != 1 || got.MissingIds[0] != 1000 {
		t.Fatalf("get bodies: %v %v", got, err)
	}
	for i := 0; i < 100; i++ {
		o := [3]float64{rng.Float64()*60 - 30, rng.Float64()*60 - 30, rng.Float64()*60 - 30}
		d := [3]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		n := math.Sqrt(d[0]*d[0] + d[1]*d[1] + d[2]*d[2])
		for k := range d {
			d[k] = float64(float32(d[k] / n))
		}
		r, err := c.Raycast(ctx(t), &pb.RaycastRequest{Scene: "world", Mode: pb.Mode_MODE_ALL, MaxHits: 1000,
			Ray: collide.Ray(collide.V(float32(o[0]), float32(o[1]), float32(o[2])),
				collide.V(float32(d[0]), float32(d[1]), float32(d[2])), 100)})
		if err != nil {
			t.Fatal(err)
		}
		for k := range o {
			o[k] = float64(float32(o[k]))
		}
		type hit struct {
			id   uint64
			dist float64
		}
		var want []hit
		for id, sp := range spheres {
			if dist, ok := raySphere(o, d, sp.c, sp.r); ok && dist <= 100 {
				want = append(want, hit{id, dist})
			}
		}
		sort.Slice(want, func(a, b int) bool { return want[a].dist < want[b].dist })
		// Hits within 1e-3 of the ray's reach, or grazing, may go either way in float32.
		if len(r.Hits) != len(want) {
			t.Fatalf("seed %d, ray %d: %d hits, the oracle %d (%v vs %v)", seed, i, len(r.Hits), len(want), r.Hits, want)
		}
		for k, h := range r.Hits {
			if h.BodyId != want[k].id || math.Abs(float64(h.Distance)-want[k].dist) > 1e-3 {
				t.Fatalf("seed %d, ray %d, hit %d: body %d at %v, the oracle body %d at %v", seed, i, k, h.BodyId, h.Distance, want[k].id, want[k].dist)
			}
		}
	}
	if err := c.DeleteScene(ctx(t), "world"); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetScene(ctx(t), "world")
	expectCode(t, err, codes.NotFound, "scene")
}

func TestBadInputIsAnErrorWithItsCodeAndFieldPath(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	if _, err := c.CreateScene(ctx(t), "s", nil); err != nil {
		t.Fatal(err)
	}
	_, err := c.UpsertBodies(ctx(t), "s", collide.NewBody(1, collide.SphereShape(1), collide.At(0, 0, 0)),
		collide.NewBody(2, collide.SphereShape(float32(math.NaN())), collide.At(0, 0, 0)))
	e := expectCode(t, err, codes.InvalidArgument, "bodies[1].shape.sphere.radius")
	if e.MovedTo != "" || e.Sequence != 0 {
		t.Fatalf("unexpected fields in %+v", e)
	}
	_, err = c.Raycast(ctx(t), &pb.RaycastRequest{Scene: "s", Ray: collide.Ray(collide.V(0, 0, 0), collide.V(0, 0, 0), 1)})
	expectCode(t, err, codes.InvalidArgument, "ray.direction")
	_, err = c.CreateScene(ctx(t), "s", nil)
	expectCode(t, err, codes.AlreadyExists, "scene")
	_, err = c.RemoveBodies(ctx(t), "s", math.MaxUint64)
	expectCode(t, err, codes.NotFound, "ids[0]")
	_, err = c.CreateScene(ctx(t), "bad name!", nil)
	expectCode(t, err, codes.InvalidArgument, "scene")
}

func TestDeadlinesBoundEveryCall(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	if _, err := c.CreateScene(ctx(t), "s", nil); err != nil {
		t.Fatal(err)
	}
	// A version the scene never reaches: the call waits until its deadline.
	waiting := &pb.RaycastRequest{Scene: "s", MinVersion: 1000, Ray: collide.Ray(collide.V(0, 0, 0), collide.V(1, 0, 0), 1)}
	short, cancel := contextWithTimeout(200 * time.Millisecond)
	defer cancel()
	started := time.Now()
	_, err := c.Raycast(short, waiting)
	expectCode(t, err, codes.DeadlineExceeded, "")
	if time.Since(started) > 5*time.Second {
		t.Fatalf("a 200 ms deadline took %v", time.Since(started))
	}
	// The client's default deadline applies to a context without one.
	quick := s.client(&collide.Options{Deadline: 300 * time.Millisecond})
	started = time.Now()
	_, err = quick.Raycast(backgroundContext(), waiting)
	expectCode(t, err, codes.DeadlineExceeded, "")
	if elapsed := time.Since(started); elapsed < 250*time.Millisecond || elapsed > 5*time.Second {
		t.Fatalf("a 300 ms default deadline took %v", elapsed)
	}
}

func TestAServerThatIsDownFailsCallsWithUnavailable(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	if _, err := c.ListScenes(ctx(t)); err != nil {
		t.Fatal(err)
	}
	s.stop(9)
	started := time.Now()
	_, err := c.ListScenes(ctx(t))
	expectCode(t, err, codes.Unavailable, "")
	if time.Since(started) > 10*time.Second {
		t.Fatalf("the failure took %v", time.Since(started))
	}
	// Back on the same port, the same client works again.
	s.restartSamePort()
	giveUp := time.Now().Add(20 * time.Second)
	for {
		if _, err = c.ListScenes(ctx(t)); err == nil || time.Now().After(giveUp) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("after the restart: %v", err)
	}
}

func TestTokensAreSentAndRefusalsCarryTheirCodes(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("admin-token admin\nreader-token reader\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "--token_file="+tokens)
	admin := s.client(&collide.Options{Token: "admin-token"})
	if _, err := admin.CreateScene(ctx(t), "s", nil); err != nil {
		t.Fatal(err)
	}
	_, err := s.client(nil).ListScenes(ctx(t))
	expectCode(t, err, codes.Unauthenticated, "authorization")
	reader := s.client(&collide.Options{Token: "reader-token"})
	if _, err := reader.GetScene(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	_, err = reader.UpsertBodies(ctx(t), "s", collide.NewBody(1, collide.SphereShape(1), collide.At(0, 0, 0)))
	expectCode(t, err, codes.PermissionDenied, "")
	// A writer refused for good fails at once, not after retries.
	w, err := reader.OpenUpdateWriter(ctx(t), "s", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The refusal comes asynchronously: a Send before it keeps its batch, which then fails with
	// it; a Send after it returns it.
	p, err := w.Send(ctx(t), collide.MoveBatch([]uint64{1}, []float32{0, 0, 0, 0, 0, 0, 1}))
	if err == nil {
		_, err = p.Wait(ctx(t))
	}
	expectCode(t, err, codes.PermissionDenied, "")
	expectCode(t, w.Flush(ctx(t)), codes.PermissionDenied, "")
	_, err = w.Send(ctx(t), collide.MoveBatch(nil, nil))
	expectCode(t, err, codes.PermissionDenied, "")
	w.Cancel()
}

func TestWritesToAMovingSceneNameItsDestination(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	if _, err := c.CreateScene(ctx(t), "moving", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpsertBodies(ctx(t), "moving", collide.NewBody(1, collide.SphereShape(1), collide.At(0, 0, 0))); err != nil {
		t.Fatal(err)
	}
	info, err := c.SetSceneMoving(ctx(t), "moving", "10.0.0.4:50051")
	if err != nil || info.MovedTo != "10.0.0.4:50051" {
		t.Fatalf("set moving: %v %v", info, err)
	}
	_, err = c.UpsertBodies(ctx(t), "moving", collide.NewBody(2, collide.SphereShape(1), collide.At(3, 0, 0)))
	if e := expectCode(t, err, codes.FailedPrecondition, "scene"); e.MovedTo != "10.0.0.4:50051" {
		t.Fatalf("moved_to %q", e.MovedTo)
	}
	// The update writer sends its batch again (not applied, not rejected) until the scene is
	// written here again.
	w, err := c.OpenUpdateWriter(ctx(t), "moving", &collide.UpdateWriterOptions{MaxBackoff: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p, err := w.Send(ctx(t), &pb.UpdateBatch{Ops: []*pb.UpdateOp{collide.SetPoseOp(1, collide.At(1, 2, 3))}})
	if err != nil {
		t.Fatal(err)
	}
	for give := time.Now().Add(10 * time.Second); w.Redirected() < 2 && time.Now().Before(give); {
		time.Sleep(20 * time.Millisecond)
	}
	if w.Redirected() < 2 || w.Pending() != 1 {
		t.Fatalf("redirected %d, pending %d", w.Redirected(), w.Pending())
	}
	// Reads go on; a cleared mark takes writes again.
	if _, err := c.GetBodies(ctx(t), "moving"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ClearSceneMoving(ctx(t), "moving"); err != nil {
		t.Fatal(err)
	}
	if ack, err := p.Wait(ctx(t)); err != nil || ack.Version != 2 || ack.Duplicate {
		t.Fatalf("ack %v, %v", ack, err)
	}
	if err := w.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
}

func TestFloat32sPrintAsTheirShortestDecimal(t *testing.T) {
	cases := map[float32]string{0.1: "0.1", 9: "9", -0.5: "-0.5", 0.25881904: "0.25881904",
		1e-7: "1e-07", 16777216: "1.6777216e+07", float32(math.SmallestNonzeroFloat32): "1e-45"}
	for value, want := range cases {
		if got := collide.FormatFloat32(value); got != want {
			t.Errorf("FormatFloat32(%v) = %q, want %q", value, got, want)
		}
	}
	// Every printed value reads back as the same float32.
	rng := rand.New(rand.NewSource(5))
	for i := 0; i < 100000; i++ {
		f := math.Float32frombits(rng.Uint32())
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			continue
		}
		text := collide.FormatFloat32(f)
		back, err := parseFloat32(text)
		if err != nil || back != f {
			t.Fatalf("seed 5: %v printed %q reads back as %v (%v)", f, text, back, err)
		}
	}
}
