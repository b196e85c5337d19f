package collide_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"collide.dev/collide"
)

// server is a real collide-server child process ($COLLIDE_SERVER, which ctest sets) on
// 127.0.0.1, port 0 at first, with its data in a temporary directory.
type server struct {
	t       *testing.T
	binary  string
	dir     string
	flags   []string
	port    int
	cmd     *exec.Cmd
	waitErr chan error
}

func startServer(t *testing.T, flags ...string) *server {
	t.Helper()
	binary := os.Getenv("COLLIDE_SERVER")
	if binary == "" {
		t.Fatal("set COLLIDE_SERVER to the collide-server binary (ctest does)")
	}
	dir := t.TempDir()
	s := &server{t: t, binary: binary, dir: dir,
		flags: append([]string{"--data_dir=" + filepath.Join(dir, "data"), "--log_level=warn"}, flags...)}
	s.start(0)
	t.Cleanup(func() { s.stop(syscall.SIGTERM) })
	return s
}

func (s *server) address() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

// start runs the server on port (0: a free one) and waits for its port file.
func (s *server) start(port int) {
	s.t.Helper()
	if err := s.launch(port); err != nil {
		s.t.Fatal(err)
	}
}

// restartSamePort starts the server again on its port and data directory (the port may linger
// briefly after a kill: it tries for 10 s).
func (s *server) restartSamePort() {
	s.t.Helper()
	giveUp := time.Now().Add(10 * time.Second)
	for {
		err := s.launch(s.port)
		if err == nil {
			return
		}
		if time.Now().After(giveUp) {
			s.t.Fatalf("collide-server did not restart on port %d: %v", s.port, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// launch starts the server process and waits up to 20 s for its port file.
func (s *server) launch(port int) error {
	portFile := filepath.Join(s.dir, "port")
	os.Remove(portFile)
	log, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	args := append([]string{fmt.Sprintf("--address=127.0.0.1:%d", port), "--port_file=" + portFile}, s.flags...)
	cmd := exec.Command(s.binary, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	giveUp := time.Now().Add(20 * time.Second)
	for time.Now().Before(giveUp) {
		if text, err := os.ReadFile(portFile); err == nil && strings.HasSuffix(string(text), "\n") {
			if s.port, err = strconv.Atoi(strings.TrimSpace(string(text))); err != nil {
				return err
			}
			s.cmd, s.waitErr = cmd, done
			return nil
		}
		select {
		case err := <-done:
			return fmt.Errorf("collide-server exited (%v): %s", err, s.logs())
		case <-time.After(20 * time.Millisecond):
		}
	}
	cmd.Process.Kill()
	<-done
	return fmt.Errorf("collide-server wrote no port file in 20 s: %s", s.logs())
}

// stop sends sig and waits for the exit (SIGKILL after 20 s).
func (s *server) stop(sig syscall.Signal) {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(sig)
	select {
	case <-s.waitErr:
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		<-s.waitErr
	}
	s.cmd = nil
}

// pause stops the server with SIGSTOP and waits until every thread of it is stopped. The signal
// does not stop them at once: the thread the kernel picks to take it stops the others when it
// next runs, and until then they go on answering (on a busy machine, for milliseconds).
func (s *server) pause() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		s.t.Fatal(err)
	}
	giveUp := time.Now().Add(10 * time.Second)
	for !allThreadsStopped(s.cmd.Process.Pid) {
		if time.Now().After(giveUp) {
			s.t.Fatal("collide-server's threads did not all stop within 10 s of SIGSTOP")
		}
		time.Sleep(time.Millisecond)
	}
}

// resume continues a paused server.
func (s *server) resume() { s.cmd.Process.Signal(syscall.SIGCONT) }

// allThreadsStopped tells whether every thread of process pid is in state T (stopped), as
// /proc/<pid>/task/<tid>/stat says: "tid (command) state ...".
func allThreadsStopped(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, task.Name()))
		if err != nil {
			return false
		}
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 || i+2 >= len(stat) || stat[i+2] != 'T' {
			return false
		}
	}
	return true
}

func (s *server) logs() string {
	text, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	return string(text)
}

// client is a client of the server, closed when the test ends.
func (s *server) client(options *collide.Options) *collide.Client {
	s.t.Helper()
	c, err := collide.Dial(s.address(), options)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { c.Close() })
	return c
}

// ctx is a context for one test step: 30 s.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}
