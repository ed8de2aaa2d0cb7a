package main

import "testing"

// imageProbe lives in the executable's data segment (initialised, written at run time):
// releasing the image must leave it as the program wrote it.
var imageProbe = [4]int{1, 2, 3, 4}

// TestReleaseImage: the read-only mappings of the test binary are given back (RssFile
// falls) and the data segment keeps what was written to it; the code runs on after.
func TestReleaseImage(t *testing.T) {
	imageProbe[0] = 42
	before, after, err := releaseImage()
	if err != nil {
		t.Fatal(err)
	}
	if before == 0 || after >= before {
		t.Errorf("RssFile %d → %d bytes, want it to fall", before, after)
	}
	if imageProbe != [4]int{42, 2, 3, 4} {
		t.Errorf("data segment after release = %v, want what was written: [42 2 3 4]", imageProbe)
	}
	spans, err := imageSpans(0)
	if err != nil || len(spans) != 0 {
		t.Errorf("imageSpans(inode 0) = %v, %v; want none", spans, err)
	}
}
