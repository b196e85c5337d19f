package collide_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"collide.dev/collide"
	pb "collide.dev/collide/collidepb"
)

const writerBodies = 10

// moveOf is the move batch number n makes: body n % 10 + 1 to (n, -n, 0.5).
func moveOf(n int) *pb.UpdateBatch {
	return collide.MoveBatch([]uint64{uint64(n%writerBodies + 1)}, []float32{float32(n), float32(-n), 0.5, 0, 0, 0, 1})
}

func createWithBodies(t *testing.T, c *collide.Client, scene string) {
	t.Helper()
	if _, err := c.CreateScene(ctx(t), scene, nil); err != nil {
		t.Fatal(err)
	}
	var bodies []*pb.Body
	for id := uint64(1); id <= writerBodies; id++ {
		bodies = append(bodies, collide.NewBody(id, collide.SphereShape(0.5), collide.At(0, 0, 0)))
	}
	if _, err := c.UpsertBodies(ctx(t), scene, bodies...); err != nil {
		t.Fatal(err)
	}
}

func TestWriterBatchesAreAcknowledgedInOrder(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	if _, err := c.CreateScene(ctx(t), "s", nil); err != nil {
		t.Fatal(err)
	}
	w, err := c.OpenUpdateWriter(ctx(t), "s", &collide.UpdateWriterOptions{ClientID: 77, FirstSequence: 10})
	if err != nil {
		t.Fatal(err)
	}
	created := &pb.UpdateBatch{Ops: []*pb.UpdateOp{
		collide.UpsertOp(collide.NewBody(1, collide.SphereShape(1), collide.At(0, 0, 0))),
		collide.UpsertOp(collide.NewBody(2, collide.SphereShape(1), collide.At(0, 0, 0))),
		collide.UpsertOp(collide.NewBody(3, collide.SphereShape(1), collide.At(0, 0, 0)))}}
	moved := collide.MoveBatch([]uint64{2, 3}, []float32{5, 0, 0, 0, 0, 0, 1, 6, 0, 0, 0, 0, 0, 1})
	moved.Ops = []*pb.UpdateOp{collide.SetPoseOp(1, collide.At(1, 2, 3))}
	moved.Tick = collide.U64(4)
	filtered := &pb.UpdateBatch{Ops: []*pb.UpdateOp{collide.SetFilterOp(3, 4, 4), collide.RemoveOp(2)}}
	var pending []*collide.PendingBatch
	for _, b := range []*pb.UpdateBatch{created, moved, filtered} {
		p, err := w.Send(ctx(t), b)
		if err != nil {
			t.Fatal(err)
		}
		pending = append(pending, p)
	}
	if created.ClientSequence != 0 || created.Scene != "" {
		t.Fatal("Send changed the caller's batch")
	}
	for i, p := range pending {
		ack, err := p.Wait(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		if ack.ClientSequence != uint64(10+i) || ack.Version != uint64(1+i) || ack.Duplicate {
			t.Fatalf("ack %d: %v", i, ack)
		}
	}
	if w.NextSequence() != 13 || w.Version() != 3 || w.ClientID() != 77 || w.Pending() != 0 {
		t.Fatalf("next %d version %d id %d pending %d", w.NextSequence(), w.Version(), w.ClientID(), w.Pending())
	}
	if err := w.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetBodies(ctx(t), "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Bodies) != 2 || got.Bodies[0].Id != 1 || got.Bodies[1].Id != 3 ||
		!proto.Equal(got.Bodies[0].Pose.Position, collide.V(1, 2, 3)) || !proto.Equal(got.Bodies[1].Pose.Position, collide.V(6, 0, 0)) ||
		got.Bodies[1].GetCategory() != 4 || got.Bodies[1].GetMask() != 4 {
		t.Fatalf("bodies %v", got.Bodies)
	}
	info, _ := c.GetScene(ctx(t), "s")
	if info.GetStats().GetTick() != 4 {
		t.Fatalf("tick %d", info.GetStats().GetTick())
	}
	// A random client id is chosen, never 0, different per writer.
	a, _ := c.OpenUpdateWriter(ctx(t), "s", nil)
	b, _ := c.OpenUpdateWriter(ctx(t), "s", nil)
	if a.ClientID() == 0 || a.ClientID() == b.ClientID() {
		t.Fatalf("client ids %d %d", a.ClientID(), b.ClientID())
	}
	a.Cancel()
	b.Cancel()
}

func TestWriterRejectedBatchesCarryTheirFieldPathsAndAreNotResent(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	if _, err := c.CreateScene(ctx(t), "s", nil); err != nil {
		t.Fatal(err)
	}
	w, _ := c.OpenUpdateWriter(ctx(t), "s", nil)
	defer w.Cancel()
	send := func(b *pb.UpdateBatch) *collide.PendingBatch {
		p, err := w.Send(ctx(t), b)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	send(&pb.UpdateBatch{Ops: []*pb.UpdateOp{collide.UpsertOp(collide.NewBody(1, collide.SphereShape(1), collide.At(0, 0, 0)))}})
	badMove := send(collide.MoveBatch([]uint64{1, 5}, []float32{0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1}))
	badRotation := send(&pb.UpdateBatch{Ops: []*pb.UpdateOp{collide.SetPoseOp(1, collide.Posed(collide.V(0, 0, 0), collide.Q(0, 0, 0, 0.5)))}})
	good := send(collide.MoveBatch([]uint64{1}, []float32{3, 0, 0, 0, 0, 0, 1}))
	if ack, err := good.Wait(ctx(t)); err != nil || ack.Version != 2 {
		t.Fatalf("good batch: %v %v", ack, err)
	}
	_, err := badMove.Wait(ctx(t))
	if e := expectCode(t, err, codes.NotFound, "moves.ids[1]"); e.Sequence != 2 {
		t.Fatalf("sequence %d", e.Sequence)
	}
	_, err = badRotation.Wait(ctx(t))
	expectCode(t, err, codes.InvalidArgument, "ops[0].set_pose.pose.rotation")
	// Flush reports the first rejection once, then is clean.
	expectCode(t, w.Flush(ctx(t)), codes.NotFound, "moves.ids[1]")
	if err := w.Flush(ctx(t)); err != nil {
		t.Fatal(err)
	}
	// An unknown scene: the batch is refused with the path `scene`.
	missing, _ := c.OpenUpdateWriter(ctx(t), "missing", nil)
	_, err = missing.Apply(ctx(t), &pb.UpdateBatch{Ops: []*pb.UpdateOp{collide.RemoveOp(1)}})
	expectCode(t, err, codes.NotFound, "scene")
	missing.Cancel()
}

func TestWriterResendIsAcknowledgedAsADuplicate(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	createWithBodies(t, c, "s")
	w, _ := c.OpenUpdateWriter(ctx(t), "s", &collide.UpdateWriterOptions{ClientID: 5})
	w.Send(ctx(t), moveOf(1))
	w.Send(ctx(t), moveOf(2))
	if err := w.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
	// Another writer with the same id replays sequence 2: acknowledged, not applied again.
	replay, _ := c.OpenUpdateWriter(ctx(t), "s", &collide.UpdateWriterOptions{ClientID: 5, FirstSequence: 2})
	ack, err := replay.Apply(ctx(t), collide.MoveBatch([]uint64{3}, []float32{9, 9, 9, 0, 0, 0, 1}))
	if err != nil || !ack.Duplicate || ack.Version != 3 {
		t.Fatalf("replayed: %v %v", ack, err)
	}
	fresh, err := replay.Apply(ctx(t), moveOf(12))
	if err != nil || fresh.Duplicate || fresh.Version != 4 {
		t.Fatalf("fresh: %v %v", fresh, err)
	}
	replay.Close(ctx(t))
}

// TestWriterAppliesEveryBatchOnceAcrossServerKills kills the server with SIGKILL twice in the
// middle of a stream of 600 batches (some sent while it is down) and restarts it on the same
// port and data: every batch is acknowledged once, the scene's version grew by exactly the
// number of batches, and every body is where the last batch put it.
func TestWriterAppliesEveryBatchOnceAcrossServerKills(t *testing.T) {
	s := startServer(t, "--durability=always")
	c := s.client(nil)
	createWithBodies(t, c, "s")
	const total = 600
	w, err := c.OpenUpdateWriter(ctx(t), "s", &collide.UpdateWriterOptions{MaxPending: total, InitialBackoff: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	acked := map[uint64]int{}
	var waits sync.WaitGroup
	sendRange := func(from, to int) {
		for n := from; n < to; n++ {
			p, err := w.Send(ctx(t), moveOf(n))
			if err != nil {
				t.Error(err)
				return
			}
			waits.Add(1)
			go func() {
				defer waits.Done()
				ack, err := p.Wait(ctx(t))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked[ack.ClientSequence]++
				mu.Unlock()
			}()
			time.Sleep(time.Millisecond)
		}
	}
	for round, bounds := range [][2]int{{1, 200}, {200, 400}} {
		sendRange(bounds[0], bounds[0]+100)
		s.stop(syscall.SIGKILL)
		// Sent while the server is down: pending until the restart, then resent.
		sendRange(bounds[0]+100, bounds[1])
		if w.Pending() == 0 {
			t.Fatalf("round %d: nothing pending while the server is down", round)
		}
		s.restartSamePort()
		// Resent: the next kill breaks a working stream.
		if err := w.Flush(ctx(t)); err != nil {
			t.Fatal(err)
		}
	}
	sendRange(400, total+1)
	if err := w.Flush(ctx(t)); err != nil {
		t.Fatal(err)
	}
	waits.Wait()
	if err := w.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if w.Reconnects() < 2 {
		t.Fatalf("%d reconnects, expected at least 2", w.Reconnects())
	}
	if len(acked) != total {
		t.Fatalf("%d batches acknowledged, expected %d", len(acked), total)
	}
	for seq, n := range acked {
		if n != 1 || seq < 1 || seq > total {
			t.Fatalf("sequence %d acknowledged %d times", seq, n)
		}
	}
	info, err := c.GetScene(ctx(t), "s")
	if err != nil {
		t.Fatal(err)
	}
	// Version 1 is the upsert of the bodies, then one per batch.
	if info.Stats.Version != total+1 {
		t.Fatalf("version %d, expected %d: a batch was applied twice or lost", info.Stats.Version, total+1)
	}
	got, _ := c.GetBodies(ctx(t), "s")
	for _, b := range got.Bodies {
		last := 0
		for n := 1; n <= total; n++ {
			if uint64(n%writerBodies+1) == b.Id {
				last = n
			}
		}
		if !proto.Equal(b.Pose.Position, collide.V(float32(last), float32(-last), 0.5)) {
			t.Fatalf("body %d at %v, expected batch %d's position", b.Id, b.Pose.Position, last)
		}
	}
}

func TestWriterFailsWhenTheServerDoesNotComeBack(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	createWithBodies(t, c, "s")
	w, _ := c.OpenUpdateWriter(ctx(t), "s", &collide.UpdateWriterOptions{ReconnectTimeout: 2 * time.Second})
	if _, err := w.Apply(ctx(t), moveOf(1)); err != nil {
		t.Fatal(err)
	}
	s.stop(syscall.SIGKILL)
	p, err := w.Send(ctx(t), moveOf(2))
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	flushErr := w.Flush(ctx(t))
	expectCode(t, flushErr, codes.Unavailable, "")
	if elapsed := time.Since(started); elapsed > 15*time.Second {
		t.Fatalf("gave up after %v", elapsed)
	}
	if _, err := p.Wait(ctx(t)); err != flushErr {
		t.Fatalf("the pending batch failed with %v, the writer with %v", err, flushErr)
	}
	_, err = w.Send(ctx(t), moveOf(3))
	expectCode(t, err, codes.Unavailable, "")
	w.Cancel()
}

func TestWriterResendsABatchAnsweredWithMovedToUntilItApplies(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	createWithBodies(t, c, "s")
	w, err := c.OpenUpdateWriter(ctx(t), "s", &collide.UpdateWriterOptions{MaxBackoff: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if ack, err := w.Apply(ctx(t), moveOf(1)); err != nil || ack.Version != 2 {
		t.Fatalf("ack %v, %v", ack, err)
	}
	// Marked as moving, the server answers the scene's batches with Error.moved_to (as a
	// follower of a replicated scene names its owner) and applies none.
	if _, err := c.SetSceneMoving(ctx(t), "s", "10.0.0.4:50051"); err != nil {
		t.Fatal(err)
	}
	var pending []*collide.PendingBatch
	for n := 2; n <= 3; n++ {
		p, err := w.Send(ctx(t), moveOf(n))
		if err != nil {
			t.Fatal(err)
		}
		pending = append(pending, p)
	}
	for give := time.Now().Add(10 * time.Second); w.Redirected() < 2 && time.Now().Before(give); {
		time.Sleep(20 * time.Millisecond)
	}
	if w.Redirected() < 2 || w.Pending() != 2 {
		t.Fatalf("redirected %d, pending %d", w.Redirected(), w.Pending())
	}
	if info, err := c.GetScene(ctx(t), "s"); err != nil || info.Stats.Version != 2 {
		t.Fatalf("scene %v, %v", info, err)
	}
	// The mark cleared: both batches apply, once each, and none was rejected.
	if _, err := c.ClearSceneMoving(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx(t)); err != nil {
		t.Fatal(err)
	}
	for i, p := range pending {
		ack, err := p.Wait(ctx(t))
		if err != nil || ack.Version != uint64(3+i) || ack.Duplicate {
			t.Fatalf("batch %d: ack %v, %v", p.Sequence, ack, err)
		}
	}
	if err := w.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if info, err := c.GetScene(ctx(t), "s"); err != nil || info.Stats.Version != 4 {
		t.Fatalf("scene %v, %v", info, err)
	}
	got, err := c.GetBodies(ctx(t), "s")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range got.Bodies {
		// moveOf(2) and moveOf(3) place bodies 3 and 4 at (n, -n, 0.5).
		if b.Id == 3 || b.Id == 4 {
			n := float32(b.Id - 1)
			if p := b.Pose.Position; p.X != n || p.Y != -n {
				t.Fatalf("body %d at %v", b.Id, p)
			}
		}
	}
}

func TestWriterAnsweredWithMovedToForTooLongFailsNamingTheServer(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	createWithBodies(t, c, "s")
	if _, err := c.SetSceneMoving(ctx(t), "s", "10.0.0.4:50051"); err != nil {
		t.Fatal(err)
	}
	w, err := c.OpenUpdateWriter(ctx(t), "s", &collide.UpdateWriterOptions{MaxBackoff: 100 * time.Millisecond, ReconnectTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	p, err := w.Send(ctx(t), moveOf(1))
	if err != nil {
		t.Fatal(err)
	}
	flushErr := w.Flush(ctx(t))
	if e := expectCode(t, flushErr, codes.FailedPrecondition, ""); e.MovedTo != "10.0.0.4:50051" || e.Sequence != 0 {
		t.Fatalf("writer failed with %+v", e)
	}
	if _, err := p.Wait(ctx(t)); err != flushErr {
		t.Fatalf("the pending batch failed with %v, the writer with %v", err, flushErr)
	}
	if w.Redirected() < 2 {
		t.Fatalf("redirected %d", w.Redirected())
	}
	if info, err := c.GetScene(ctx(t), "s"); err != nil || info.Stats.Version != 1 {
		t.Fatalf("scene %v, %v", info, err)
	}
	w.Cancel()
}

func TestWriterSendWaitsWhileMaxPendingBatchesAreUnacknowledged(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	createWithBodies(t, c, "s")
	w, _ := c.OpenUpdateWriter(ctx(t), "s", &collide.UpdateWriterOptions{MaxPending: 2})
	defer w.Cancel()
	if _, err := w.Apply(ctx(t), moveOf(1)); err != nil {
		t.Fatal(err)
	}
	// A stopped server acknowledges nothing: two batches fit, the third waits for room.
	s.pause()
	first, err1 := w.Send(ctx(t), moveOf(2))
	_, err2 := w.Send(ctx(t), moveOf(3))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := w.Send(short, moveOf(4))
	// Counted while the server is still stopped: once it runs again it may acknowledge both.
	pending := w.Pending()
	s.resume()
	expectCode(t, err, codes.DeadlineExceeded, "")
	if pending != 2 {
		t.Fatalf("%d pending", pending)
	}
	if ack, err := first.Wait(ctx(t)); err != nil || ack.Version != 3 {
		t.Fatalf("after SIGCONT: %v %v", ack, err)
	}
	if _, err := w.Apply(ctx(t), moveOf(4)); err != nil {
		t.Fatal(err)
	}
}

func TestWriterCancelFailsWhatIsPending(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	createWithBodies(t, c, "s")
	w, _ := c.OpenUpdateWriter(ctx(t), "s", nil)
	s.pause()
	defer s.resume()
	p, _ := w.Send(ctx(t), moveOf(1))
	w.Cancel()
	_, err := p.Wait(ctx(t))
	expectCode(t, err, codes.Canceled, "")
	_, err = w.Send(ctx(t), moveOf(2))
	expectCode(t, err, codes.Canceled, "")
}

// natsServer is a real nats-server child process with JetStream, on a free port of 127.0.0.1,
// with its store in a temporary directory; skipped when nats-server is not installed.
type natsServer struct {
	url     string
	cmd     *exec.Cmd
	waitErr chan error
}

func startNats(t *testing.T) *natsServer {
	t.Helper()
	binary, err := exec.LookPath("nats-server")
	if err != nil {
		if _, statErr := os.Stat("/usr/sbin/nats-server"); statErr != nil {
			t.Skip("nats-server not found (scripts/lib/setup.sh installs Debian's nats-server)")
		}
		binary = "/usr/sbin/nats-server"
	}
	dir := t.TempDir()
	log, err := os.Create(filepath.Join(dir, "nats.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command(binary, "-js", "-a", "127.0.0.1", "-p", "-1", "-m", "-1",
		"-sd", filepath.Join(dir, "js"), "--ports_file_dir", dir)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n := &natsServer{cmd: cmd, waitErr: make(chan error, 1)}
	go func() { n.waitErr <- cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(cmd.Process.Pid, syscall.SIGCONT)
		cmd.Process.Kill()
		<-n.waitErr
	})
	// The ports file, {"nats":["nats://127.0.0.1:PORT"],...}, may be read half written.
	portsFile := filepath.Join(dir, fmt.Sprintf("nats-server_%d.ports", cmd.Process.Pid))
	for giveUp := time.Now().Add(20 * time.Second); ; {
		var ports struct{ Nats []string }
		if text, err := os.ReadFile(portsFile); err == nil && json.Unmarshal(text, &ports) == nil && len(ports.Nats) > 0 {
			n.url = ports.Nats[0]
			return n
		}
		if time.Now().After(giveUp) {
			text, _ := os.ReadFile(filepath.Join(dir, "nats.log"))
			t.Fatalf("nats-server wrote no ports file in 20 s: %s", text)
		}
		select {
		case err := <-n.waitErr:
			text, _ := os.ReadFile(filepath.Join(dir, "nats.log"))
			t.Fatalf("nats-server exited (%v): %s", err, text)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// signal sends sig (SIGSTOP, SIGCONT) to the nats-server.
func (n *natsServer) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(n.cmd.Process.Pid, sig); err != nil {
		t.Fatal(err)
	}
}

// TestWriterResendsBatchesRefusedUnavailableWhileTheOwnersLeaseRanOut stops the NATS server of a
// replicated scene with SIGSTOP for about 1.8 s in the middle of a stream of 150 batches, one
// every 20 ms: the owner's 600 ms lease runs out, and it refuses the batches UNAVAILABLE,
// unapplied, until NATS answers again. The writer resends them: none is rejected, each applies
// exactly once (one version each), and every body is in the scene.
func TestWriterResendsBatchesRefusedUnavailableWhileTheOwnersLeaseRanOut(t *testing.T) {
	nats := startNats(t)
	s := startServer(t, "--nats_url="+nats.url, "--replication_replicas=1",
		"--replication_lease_ms=600", "--replication_publish_timeout_ms=1000")
	// Cleanups run last first: NATS answers again before the server stops.
	t.Cleanup(func() { syscall.Kill(nats.cmd.Process.Pid, syscall.SIGCONT) })
	c := s.client(nil)
	// The server may still be connecting to NATS: UNAVAILABLE until it is.
	replicated := &pb.SceneOptions{Durability: pb.Durability_DURABILITY_REPLICATED}
	for giveUp := time.Now().Add(20 * time.Second); ; {
		_, err := c.CreateScene(ctx(t), "r", replicated)
		if err == nil {
			break
		}
		if status.Code(err) != codes.Unavailable || time.Now().After(giveUp) {
			t.Fatalf("%v: %s", err, s.logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
	before, err := c.GetScene(ctx(t), "r")
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.OpenUpdateWriter(ctx(t), "r", &collide.UpdateWriterOptions{InitialBackoff: 10 * time.Millisecond,
		MaxBackoff: 100 * time.Millisecond, ReconnectTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	const total = 150
	var pending []*collide.PendingBatch
	for i := 0; i < total; i++ {
		switch i {
		case 30:
			nats.signal(t, syscall.SIGSTOP)
		case 120:
			nats.signal(t, syscall.SIGCONT)
		}
		body := collide.NewBody(uint64(1+i), collide.SphereShape(0.5), collide.At(float32(1+i), 0, 0))
		p, err := w.Send(ctx(t), &pb.UpdateBatch{Ops: []*pb.UpdateOp{collide.UpsertOp(body)}})
		if err != nil {
			t.Fatal(err)
		}
		pending = append(pending, p)
		time.Sleep(20 * time.Millisecond)
	}
	closeErr := w.Close(ctx(t))
	acknowledged := 0
	var rejected []string
	for _, p := range pending {
		var e *collide.Error
		if _, err := p.Wait(ctx(t)); err == nil {
			acknowledged++
		} else if errors.As(err, &e) && e.Sequence != 0 {
			rejected = append(rejected, e.Error())
		}
	}
	if len(rejected) > 0 {
		t.Errorf("%d batches rejected:\n%s", len(rejected), strings.Join(rejected, "\n"))
	}
	if closeErr != nil {
		t.Fatalf("close: %v: %s", closeErr, s.logs())
	}
	if acknowledged != total {
		t.Errorf("%d batches acknowledged, expected %d", acknowledged, total)
	}
	if w.Unavailable() < 1 {
		t.Errorf("no batch answered UNAVAILABLE: none was sent while the lease had run out")
	}
	after, err := c.GetScene(ctx(t), "r")
	if err != nil {
		t.Fatal(err)
	}
	if after.Stats.Version != before.Stats.Version+total {
		t.Errorf("version %d, expected %d: a batch was applied twice or lost", after.Stats.Version, before.Stats.Version+total)
	}
	got, err := c.GetBodies(ctx(t), "r")
	if err != nil {
		t.Fatal(err)
	}
	present := map[uint64]bool{}
	for _, b := range got.Bodies {
		present[b.Id] = true
	}
	for id := uint64(1); id <= total; id++ {
		if !present[id] {
			t.Errorf("body %d missing", id)
		}
	}
	t.Logf("unavailable %d, redirected %d, reconnects %d", w.Unavailable(), w.Redirected(), w.Reconnects())
}
