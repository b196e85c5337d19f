package collide_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"collide.dev/collide"
	pb "collide.dev/collide/collidepb"
)

func TestQueryStreamPipelinesBatchesAndReadsItsWrites(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	createWithBodies(t, c, "s")
	w, _ := c.OpenUpdateWriter(ctx(t), "s", nil)
	defer w.Cancel()
	q := c.OpenQueryStream(ctx(t), "s", &collide.QueryStreamOptions{MaxPending: 8})
	// 50 batches in flight at once (8 at most unanswered): batch n moves body 1 to x = n and
	// asks, at that batch's version, for a ray that meets it there.
	var answers []*collide.QueryAnswer
	for n := 1; n <= 50; n++ {
		p, err := w.Send(ctx(t), collide.MoveBatch([]uint64{1}, []float32{float32(n), 100, 0, 0, 0, 0, 1}))
		if err != nil {
			t.Fatal(err)
		}
		ack, err := p.Wait(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		a, err := q.Submit(ctx(t), &pb.QueryBatch{MinVersion: ack.Version, Queries: []*pb.Query{
			collide.RaycastQuery(uint64(n), collide.Ray(collide.V(-100, 100, 0), collide.V(1, 0, 0), 1000))}})
		if err != nil {
			t.Fatal(err)
		}
		answers = append(answers, a)
	}
	for i, a := range answers {
		n := i + 1
		r, err := a.Wait(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		hits := r.Results[0].Hits
		// Batch n made version n + 1 with body 1 at x = n; a later version may answer.
		if r.Version < uint64(n+1) || r.Results[0].RequestId != uint64(n) || len(hits) == 0 || hits[0].BodyId != 1 ||
			hits[0].Distance != float32(100+r.Version-1)-0.5 {
			t.Fatalf("batch %d: %v", n, r)
		}
	}
	// A bad query is refused alone; a bad batch as a whole.
	r, err := q.Query(ctx(t), &pb.QueryBatch{Queries: []*pb.Query{
		collide.RaycastQuery(1, collide.Ray(collide.V(0, 0, 0), collide.V(0, 0, 0), 1)),
		collide.RaycastQuery(2, collide.Ray(collide.V(-100, 100, 0), collide.V(1, 0, 0), 1000))}})
	if err != nil || r.Results[0].Error == nil || r.Results[0].Error.Message[:len("queries[0].raycast.direction")] != "queries[0].raycast.direction" ||
		len(r.Results[1].Hits) != 1 {
		t.Fatalf("%v %v", r, err)
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = q.Query(ctx(t), &pb.QueryBatch{})
	expectCode(t, err, codes.FailedPrecondition, "")
	missing := c.OpenQueryStream(ctx(t), "missing", nil)
	_, err = missing.Query(ctx(t), &pb.QueryBatch{Queries: []*pb.Query{collide.RaycastQuery(1, collide.Ray(collide.V(0, 0, 0), collide.V(1, 0, 0), 1))}})
	expectCode(t, err, codes.NotFound, "scene")
	missing.Close()
}

func TestQueryStreamFailsWhatIsInFlightWhenTheServerDiesAndReopensAfter(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	createWithBodies(t, c, "s")
	q := c.OpenQueryStream(ctx(t), "s", nil)
	defer q.Close()
	// Held by min_version until the server dies.
	held, err := q.Submit(ctx(t), &pb.QueryBatch{MinVersion: 100, Queries: []*pb.Query{
		collide.RaycastQuery(1, collide.Ray(collide.V(0, 0, 0), collide.V(1, 0, 0), 1))}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	s.stop(syscall.SIGKILL)
	_, err = held.Wait(ctx(t))
	expectCode(t, err, codes.Unavailable, "")
	s.restartSamePort()
	giveUp := time.Now().Add(20 * time.Second)
	var r *pb.QueryBatchResult
	for {
		all := collide.RaycastQuery(2, collide.Ray(collide.V(-10, 0, 0), collide.V(1, 0, 0), 100))
		all.Mode = pb.Mode_MODE_ALL
		r, err = q.Query(ctx(t), &pb.QueryBatch{Queries: []*pb.Query{all}})
		if err == nil || time.Now().After(giveUp) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || len(r.Results[0].Hits) != writerBodies || r.Results[0].Hits[0].Distance != 9.5 {
		t.Fatalf("after the restart: %v %v", r, err)
	}
}

func TestWatchReportsEntersAndEndsWhenTheSceneIsDeleted(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	if _, err := c.CreateScene(ctx(t), "s", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpsertBodies(ctx(t), "s", collide.NewBody(1, collide.SphereShape(0.5), collide.At(-10, 0, 0))); err != nil {
		t.Fatal(err)
	}
	// A thin fence at x = 0 that a fast body crosses in one batch: ENTER then EXIT.
	watch, err := c.Watch(ctx(t), &pb.WatchRequest{Scene: "s", Fences: []*pb.Fence{{Id: 7, Shape: collide.BoxShape(0.01, 2, 2), Pose: collide.At(0, 0, 0)}}})
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	first, err := watch.Recv()
	if err != nil || first.GetSnapshot() == nil || len(first.GetSnapshot().Fences) != 1 || len(first.GetSnapshot().Fences[0].BodyIds) != 0 {
		t.Fatalf("snapshot %v %v", first, err)
	}
	w, _ := c.OpenUpdateWriter(ctx(t), "s", nil)
	if _, err := w.Apply(ctx(t), collide.MoveBatch([]uint64{1}, []float32{10, 0, 0, 0, 0, 0, 1})); err != nil {
		t.Fatal(err)
	}
	w.Close(ctx(t))
	messages, errs := watch.Messages()
	update := (<-messages).GetUpdate()
	if update == nil || len(update.Events) != 2 || update.Events[0].Kind != pb.WatchEvent_KIND_ENTER ||
		update.Events[1].Kind != pb.WatchEvent_KIND_EXIT || update.Events[0].BodyId != 1 || update.Events[0].FenceId != 7 ||
		!proto.Equal(update.Events[0].Point, collide.V(-0.01, 0, 0)) {
		t.Fatalf("update %v", update)
	}
	if err := c.DeleteScene(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	for range messages {
	}
	expectCode(t, <-errs, codes.NotFound, "scene")
	// A bad fence: the first Recv says which.
	bad, err := c.Watch(ctx(t), &pb.WatchRequest{Scene: "s", Fences: []*pb.Fence{{Id: 1, Shape: collide.SphereShape(-1)}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Recv()
	e := asError(t, err)
	if e.Code != codes.InvalidArgument && e.Code != codes.NotFound {
		t.Fatalf("bad watch: %v", err)
	}
	bad.Close()
}

func TestScenesExportToFilesAndImportBackInBothFormats(t *testing.T) {
	s := startServer(t)
	c := s.client(nil)
	createWithBodies(t, c, "s")
	dir := t.TempDir()
	original, _ := c.GetBodies(ctx(t), "s")
	for _, format := range []collide.ExportFormat{collide.FormatPB, collide.FormatJSONL} {
		path := filepath.Join(dir, "s."+string(format))
		summary, err := c.ExportSceneToFile(ctx(t), "s", path, format)
		if err != nil || summary.Bodies != writerBodies || summary.Version != 1 || summary.Bytes == 0 {
			t.Fatalf("%s: %v %v", format, summary, err)
		}
		copyName := "copy-" + string(format)
		info, err := c.ImportSceneFile(ctx(t), path, &collide.ImportOptions{Scene: copyName})
		if err != nil || info.Name != copyName || info.Stats.BodyCount != writerBodies || info.Stats.Version != 1 {
			t.Fatalf("%s: import %v %v", format, info, err)
		}
		copied, _ := c.GetBodies(ctx(t), copyName)
		if !proto.Equal(original, copied) {
			t.Fatalf("%s: the copy differs", format)
		}
		_, err = c.ImportSceneFile(ctx(t), path, &collide.ImportOptions{Scene: copyName})
		expectCode(t, err, codes.AlreadyExists, "scene")
		if _, err := c.ImportSceneFile(ctx(t), path, &collide.ImportOptions{Scene: copyName, Replace: true}); err != nil {
			t.Fatal(err)
		}
	}
	// Straight from one export stream into an import.
	export, err := c.ExportScene(ctx(t), "s", 3)
	if err != nil {
		t.Fatal(err)
	}
	chunks := 0
	info, err := c.ImportScene(ctx(t), func() (*pb.SceneExportMessage, error) {
		m, err := export.Recv()
		if m.GetChunk() != nil {
			chunks++
		}
		return m, err
	}, &collide.ImportOptions{Scene: "streamed"})
	if err != nil || info.Stats.BodyCount != writerBodies || chunks != 4 {
		t.Fatalf("streamed: %v %v, %d chunks", info, err, chunks)
	}
	// Export format 2: a trailer whose checksum (over the header, the chunks and the counts) does
	// not match is DATA_LOSS; a check_only import checks and creates nothing.
	var messages []*pb.SceneExportMessage
	again, _ := c.ExportScene(ctx(t), "s", 0)
	for {
		m, err := again.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		messages = append(messages, m)
	}
	if h := messages[0].GetHeader(); h == nil || h.Format != 2 {
		t.Fatalf("first message %v, expected a header of format 2", messages[0])
	}
	replay := func(edit func(*pb.SceneExportMessage) *pb.SceneExportMessage) func() (*pb.SceneExportMessage, error) {
		i := 0
		return func() (*pb.SceneExportMessage, error) {
			if i == len(messages) {
				return nil, io.EOF
			}
			i++
			return edit(messages[i-1]), nil
		}
	}
	checked, err := c.ImportScene(ctx(t), replay(func(m *pb.SceneExportMessage) *pb.SceneExportMessage { return m }),
		&collide.ImportOptions{Scene: "checked", CheckOnly: true})
	if err != nil || checked.Name != "checked" || checked.Stats.BodyCount != writerBodies {
		t.Fatalf("check_only: %v %v", checked, err)
	}
	_, err = c.GetScene(ctx(t), "checked")
	expectCode(t, err, codes.NotFound, "scene")
	_, err = c.ImportScene(ctx(t), replay(func(m *pb.SceneExportMessage) *pb.SceneExportMessage {
		if m.GetTrailer() == nil {
			return m
		}
		edited := proto.Clone(m).(*pb.SceneExportMessage)
		edited.GetTrailer().Crc32C ^= 1
		return edited
	}), &collide.ImportOptions{Scene: "tampered"})
	expectCode(t, err, codes.DataLoss, "trailer.crc32c")
	_, err = c.GetScene(ctx(t), "tampered")
	expectCode(t, err, codes.NotFound, "scene")
	// A damaged file imports nothing.
	path := filepath.Join(dir, "s.pb")
	data, _ := os.ReadFile(path)
	data[len(data)/2] ^= 0x40
	damaged := filepath.Join(dir, "damaged.pb")
	os.WriteFile(damaged, data, 0o644)
	if _, err := c.ImportSceneFile(ctx(t), damaged, &collide.ImportOptions{Scene: "damaged"}); err == nil {
		t.Fatal("a damaged file was imported")
	}
	_, err = c.GetScene(ctx(t), "damaged")
	expectCode(t, err, codes.NotFound, "scene")
	// A truncated file (of the undamaged bytes: a damaged chunk could be refused by the server
	// before the reader reaches the cut): the reader names the message, and nothing is created.
	whole, _ := os.ReadFile(path)
	os.WriteFile(damaged, whole[:len(whole)-3], 0o644)
	_, err = c.ImportSceneFile(ctx(t), damaged, &collide.ImportOptions{Scene: "damaged"})
	expectCode(t, err, codes.InvalidArgument, "messages[2]")
	var fileErr *collide.ExportFileError
	if !errors.As(err, &fileErr) || fileErr.Index != 2 {
		t.Fatalf("%v does not wrap the file's error", err)
	}
	_, err = c.GetScene(ctx(t), "damaged")
	expectCode(t, err, codes.NotFound, "scene")
	// An unknown scene.
	missing, _ := c.ExportScene(ctx(t), "missing", 0)
	_, err = missing.Recv()
	expectCode(t, err, codes.NotFound, "scene")
	if _, err := missing.Recv(); err == io.EOF {
		t.Fatal("io.EOF after an error")
	}
}
