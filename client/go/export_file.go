package collide

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"os"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "collide.dev/collide/collidepb"
)

// ExportFormat is an export file's format, as `collide scene export` writes them.
type ExportFormat string

const (
	// FormatPB is length-delimited protobuf: each message preceded by its length as a varint.
	FormatPB ExportFormat = "pb"
	// FormatJSONL is one JSON object per line, the proto3 JSON form of each message with the
	// proto's field names ({"header": {...}}, {"chunk": {"bodies": [...]}}, {"trailer": {...}}).
	FormatJSONL ExportFormat = "jsonl"
)

// MaxExportMessageBytes is the largest message an export file may hold.
const MaxExportMessageBytes = 64 << 20

func (f ExportFormat) check() error {
	if f != FormatPB && f != FormatJSONL {
		return errorf(codes.InvalidArgument, "format: expected pb or jsonl, got %q", string(f))
	}
	return nil
}

// GuessExportFormat is the format of a file starting with firstBytes: a JSON line starts with
// `{"`, which no delimited message does.
func GuessExportFormat(firstBytes []byte) ExportFormat {
	if bytes.HasPrefix(firstBytes, []byte(`{"`)) {
		return FormatJSONL
	}
	return FormatPB
}

// ExportFileWriter appends export messages to a file in one format.
type ExportFileWriter struct {
	out    io.Writer
	format ExportFormat
	bytes  int64
}

// NewExportFileWriter writes to out in format (FormatPB or FormatJSONL).
func NewExportFileWriter(out io.Writer, format ExportFormat) *ExportFileWriter {
	return &ExportFileWriter{out: out, format: format}
}

// Write appends one message.
func (w *ExportFileWriter) Write(m *pb.SceneExportMessage) error {
	if err := w.format.check(); err != nil {
		return err
	}
	var data []byte
	if w.format == FormatJSONL {
		line, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
		if err != nil {
			return err
		}
		// protojson may add spaces between fields; a line is one object either way.
		data = append(line, '\n')
	} else {
		body, err := proto.Marshal(m)
		if err != nil {
			return err
		}
		var length [binary.MaxVarintLen64]byte
		data = append(length[:binary.PutUvarint(length[:], uint64(len(body)))], body...)
	}
	n, err := w.out.Write(data)
	w.bytes += int64(n)
	return err
}

// Bytes is the number of bytes written so far.
func (w *ExportFileWriter) Bytes() int64 { return w.bytes }

// ExportFileReader reads an export file's messages one at a time (memory stays bounded by one
// message).
type ExportFileReader struct {
	file   *os.File
	in     *bufio.Reader
	format ExportFormat
	index  int
}

// OpenExportFile opens the export file at path; format "" guesses it from the first bytes.
func OpenExportFile(path string, format ExportFormat) (*ExportFileReader, error) {
	if format != "" {
		if err := format.check(); err != nil {
			return nil, err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	in := bufio.NewReaderSize(f, 1<<16)
	if format == "" {
		first, _ := in.Peek(2)
		format = GuessExportFormat(first)
	}
	return &ExportFileReader{file: f, in: in, format: format}, nil
}

// Format is the file's format.
func (r *ExportFileReader) Format() ExportFormat { return r.format }

// Next returns the next message, io.EOF at the end of the file, or an *ExportFileError naming
// the message that does not parse.
func (r *ExportFileReader) Next() (*pb.SceneExportMessage, error) {
	m := &pb.SceneExportMessage{}
	if r.format == FormatJSONL {
		for {
			line, err := r.in.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) == 0 {
				if err == io.EOF {
					return nil, io.EOF
				}
				if err != nil {
					return nil, err
				}
				continue
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
			if perr := protojson.Unmarshal(line, m); perr != nil {
				return nil, &ExportFileError{Index: r.index, Reason: "not a JSON export message (" + perr.Error() + ")"}
			}
			r.index++
			return m, nil
		}
	}
	length, err := binary.ReadUvarint(r.in)
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		return nil, &ExportFileError{Index: r.index, Reason: "the file ends inside its length, or a bad length"}
	}
	if length > MaxExportMessageBytes {
		return nil, &ExportFileError{Index: r.index, Reason: "over the limit of 64 MiB"}
	}
	data := make([]byte, length)
	if _, err := io.ReadFull(r.in, data); err != nil {
		return nil, &ExportFileError{Index: r.index, Reason: "the file ends inside the message"}
	}
	if err := proto.Unmarshal(data, m); err != nil {
		return nil, &ExportFileError{Index: r.index, Reason: "not an export message (" + err.Error() + ")"}
	}
	r.index++
	return m, nil
}

// Close closes the file.
func (r *ExportFileReader) Close() error { return r.file.Close() }
