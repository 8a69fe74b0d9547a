// mlasim entry point (temporary until the subcommands land).
int main() { return 0; }
