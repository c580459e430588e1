// PrintDN reads lines of hex-encoded DER X.501 Names from standard input and
// prints for each the hex of the UTF-8 bytes of X500Principal.getName() (RFC
// 2253 form), or "ERROR <exception>" when Java rejects the encoding. dn_java_test.go
// runs it with the JDK's single-file source launcher.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import javax.security.auth.x500.X500Principal;

public class PrintDN {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            try {
                X500Principal p = new X500Principal(HexFormat.of().parseHex(line.trim()));
                System.out.println(HexFormat.of().formatHex(p.getName().getBytes(StandardCharsets.UTF_8)));
            } catch (Exception e) {
                System.out.println("ERROR " + e);
            }
        }
    }
}
