/* SPDX-License-Identifier: MIT */
/* Runs a fuzz target over files or directories of inputs (the seed corpus, regression inputs)
 * when the build has no libFuzzer: the corpus then runs as an ordinary test. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return perror(path), 1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		return fclose(f), free(buf), fprintf(stderr, "%s: read error\n", path), 1;
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int runs = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st))
			return perror(argv[i]), 1;
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]))
				return 1;
			runs++;
			continue;
		}
		DIR *dir = opendir(argv[i]);
		struct dirent *e;
		while (dir && (e = readdir(dir))) {
			char path[4096];
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			if (run_file(path))
				return 1;
			runs++;
		}
		if (dir)
			closedir(dir);
	}
	printf("%d input(s) ran clean\n", runs);
	return runs ? 0 : 1;
}
