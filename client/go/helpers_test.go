package collide_test

import (
	"context"
	"strconv"
	"time"
)

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

func backgroundContext() context.Context { return context.Background() }

func parseFloat32(text string) (float32, error) {
	f, err := strconv.ParseFloat(text, 32)
	return float32(f), err
}
