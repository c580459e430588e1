// JavaRegex answers questions about java.util.regex for mapper_java_test.go.
// Each input line is tab-separated hex fields (UTF-8 text); each answer is
// one line.
//   R pattern replacement input: "NOMATCH" if the pattern does not match the
//     whole input (Matcher.matches), else the hex of
//     input.replaceAll(pattern, replacement), or "ERROR <exception>".
//   F pattern input: the matches find() reports one after another, each as
//     hex(group 0) ":" hex(group 1) (empty when group 1 is unset or absent),
//     joined by ",".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.StringJoiner;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class JavaRegex {
    static String unhex(String s) {
        return new String(HexFormat.of().parseHex(s), StandardCharsets.UTF_8);
    }

    static String hex(String s) {
        return HexFormat.of().formatHex(s.getBytes(StandardCharsets.UTF_8));
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            try {
                Pattern p = Pattern.compile(unhex(f[1]));
                if (f[0].equals("R")) {
                    String input = unhex(f[3]);
                    if (!p.matcher(input).matches()) {
                        System.out.println("NOMATCH");
                    } else {
                        System.out.println(hex(input.replaceAll(p.pattern(), unhex(f[2]))));
                    }
                } else {
                    Matcher m = p.matcher(unhex(f[2]));
                    StringJoiner sj = new StringJoiner(",");
                    while (m.find()) {
                        String g1 = m.groupCount() >= 1 ? m.group(1) : null;
                        sj.add(hex(m.group()) + ":" + (g1 == null ? "" : hex(g1)));
                    }
                    System.out.println(sj.toString());
                }
            } catch (Exception e) {
                System.out.println("ERROR " + e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }
    }
}
